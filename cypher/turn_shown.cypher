// The session and agent entries each turn was given (S5, A8), as they stood when it started:
// the changes it SAW, but erased ones.
UNWIND $ids AS tid
// (the plan starts from the index seek on t; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (t:Turn {id: tid})-[:IN_SESSION]->(s:Session)-[:OF_AGENT]->(:Agent)
      -[:IN_ORG]->({id: $org})
USING INDEX t:Turn(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
CALL (t) {
  OPTIONAL MATCH (t)-[:SAW]->(c:Change) WHERE NOT coalesce(c.erased, false)
  WITH c ORDER BY c.at DESC, c.key
  RETURN collect(c {.id, .key, .content, .kind, .status, .at}) AS sessionEntries
}
CALL (t) {
  OPTIONAL MATCH (t)-[:SAW]->(c:AgentChange) WHERE NOT coalesce(c.erased, false)
  WITH c ORDER BY c.at DESC, c.key
  RETURN collect(c {.id, .key, .content, .kind, .status, .at, .version, .about, .visibility,
                    .owner, agent: c.agent}) AS agentEntries
}
RETURN tid, sessionEntries, agentEntries
