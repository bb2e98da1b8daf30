// A11: the versions of an agent's memory after $after, oldest first, each with the entries it
// changed that the reader may see (key and owner: the log names them as the view does); a
// version that changed none of those is left out (A9).
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: $agent})-[:IN_ORG]->({id: $org})
USING INDEX a:Agent(id)
MATCH (c:AgentChange {agent: a.id})
WHERE c.version > $after AND ($all OR c.owner = '' OR c.owner = $person)
WITH c ORDER BY c.version, c.key, c.owner
WITH c.version AS version, collect(c) AS changes
ORDER BY version
LIMIT $limit
RETURN version, changes[0].at AS at, changes[0].maker AS maker, changes[0].person AS person,
       [c IN changes | c {.key, .owner}] AS keys
