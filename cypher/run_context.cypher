// A consolidation run and whose it is: its session, agent and org, and the switches in force
// there (the session's overrides and the org's defaults), so a run with nothing to read or
// with generate off ends without reading the session's view.
MATCH (r:Run {id: $run})-[:FOR_SESSION]->(s:Session)-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(o:Org)
RETURN r {.id, .model, .status, .trigger} AS run, s.id AS session, a.id AS agent, o.id AS org,
       s.useOverride AS useOverride, s.generateOverride AS generateOverride,
       o {.memoryUse, .memoryGenerate} AS switches
