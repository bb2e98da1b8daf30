// S2 and the Session view, derived from the change record: for each key, the newest change
// on the branch that ends at the head; processed items are those that runs on it read.
UNWIND $ids AS sid
MATCH (s:Session {id: sid})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(o:Org {id: $org})
MATCH (s)-[:HEAD]->(h:Version)
OPTIONAL MATCH (s)-[:WITH]->(p:Person)
OPTIONAL MATCH (s)-[:STARTED_FROM]->(parent:Session)
OPTIONAL MATCH (s)-[f:FORKED_FROM]->(source:Session)
CALL (h) {
  MATCH (h)-[:PARENT*0..]->(v:Version)<-[:AT]-(c:Change)
  WITH c, v ORDER BY v.depth DESC
  WITH c.key AS key, head(collect(c)) AS latest
  CALL (latest) {
    OPTIONAL MATCH (latest)-[:CITES]->(i:Item)
    WITH i ORDER BY i.seq
    RETURN collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq}) AS sources
  }
  RETURN collect(latest {.key, .content, .kind, .status, updatedAt: latest.at,
                         change: latest.id, sources: sources}) AS entries
}
CALL (h) {
  OPTIONAL MATCH (h)-[:PARENT*0..]->(:Version)<-[:AT]-(:Run)-[:READ]->(i:Item)
  WITH DISTINCT i ORDER BY i.seq
  RETURN collect(i.id) AS processed
}
RETURN s {.id, .kind, .revision, .model, .useOverride, .generateOverride, .createdAt,
          agent: a.id, head: h.id, person: p.id, parent: parent.id,
          forkedFrom: source.id, forkedAt: f.at} AS session,
       o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS org,
       entries, processed
