// Benchmark data only (bench/search.py): one agent's lasting entries, shared and private.
MATCH (a:Agent {id: $agent})
UNWIND $entries AS en
CREATE (e:AgentEntry {agent: a.id, key: en.key, owner: en.owner, content: en.content,
                      kind: 'preference', status: 'active', about: en.about,
                      visibility: en.visibility, updatedAt: $at, change: en.id})
CREATE (a)-[:HAS_MEMORY]->(e)
CREATE (c:AgentChange {id: en.id, agent: a.id, version: 1, op: 'remember', maker: 'person',
                       key: en.key, content: en.content, kind: 'preference', status: 'active',
                       about: en.about, visibility: en.visibility, at: $at})
CREATE (c)-[:OF_ENTRY]->(e)
CREATE (e)-[:CURRENT]->(c)
RETURN count(*) AS loaded
