// What says whether a view kept by this process is still the session's (app/memory/sessions/kept.py):
// its head and revision (every change to what a view shows moves its revision, and every change
// to its entries or turns moves its head too), its agent's count of erasures (an erasure of an
// agent entry changes the `shownAgent` of turns shown it, moving no revision), and the org's
// settings as they are now, which change without moving either. Only sessions the caller may reach answer a row, as in
// session_views.
UNWIND $ids AS sid
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: sid})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(o {id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (s)-[:HEAD]->(h:Version)
RETURN sid AS id, h.id AS head, s.revision AS revision,
       coalesce(a.entryErasures, 0) AS agentErasures,
       o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS org
