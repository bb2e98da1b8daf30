// Erases, under the agent's lock (as a command takes it), the agent entries an erasure reaches:
// those about the person or theirs (private), and those whose content rests only on items an
// erasure erased (not retention: `expired`). The content rests on the current change's sources,
// or, for a retracted entry, on the sources of the change its Forget retracted (a Forget keeps
// the content it retracts, and follows the active change it retracts: A6).
// Each becomes a tombstone: the entry and every change of it lose their content before and
// after and are marked `erased`; the person's id where they hold it (`about`, `owner`,
// `person`) becomes the erasure's opaque id; the key (what someone said) becomes an opaque key
// of the entry's own (`erased-` and a random UUID), on the entry, on every change of it and in
// the `shownAgent` of every turn shown it; the entry leaves the agent's memory (no
// HAS_MEMORY), so no view, search or instruction shows it, and keeps no sources. The change
// chain and its provenance edges stay. An entry with other sources keeps them (the erased ones
// left out where they were erased: keep_agent_sources). The memory's version grows when an entry was erased, so no kept
// snapshot of it is used again (so does it with $advance: the agent cites items an erased
// session held, and erase_session kept its entries' sources without moving it, so that its
// watchers are sent the memory once, whole), and so does its count of erasures (`entryErasures`): a turn's
// `shownAgent` changes then without its session's revision moving, so a kept view whose turns
// were read before (session_marks) is not used again; so does the count when a change's
// content is withheld (below). Counted into the erasure ($erasure).
// ($person is null when one session is erased.)
// The agent's sessions are locked first (a writer takes a session, then its agent), so a turn
// being recorded, which may have been shown an entry this erases, has committed and is found
// below; one that takes its session's lock after reads the agent memory this leaves.
MATCH (a:Agent {id: $agent})-[:IN_ORG]->(:Org {id: $org})
CALL (a) {
  MATCH (s:Session)-[:OF_AGENT]->(a)
  WITH s ORDER BY s.id
  SET s._lock = true
  REMOVE s._lock
}
SET a._lock = true
REMOVE a._lock
WITH a
CALL (a) {
  OPTIONAL MATCH (a)-[:HAS_MEMORY]->(e:AgentEntry)
  WHERE ($person IS NOT NULL
         AND (e.about = $person OR e.owner = $person
              OR EXISTS { (c:AgentChange)-[:OF_ENTRY]->(e) WHERE c.about = $person }))
     OR EXISTS {
       MATCH (e)-[:CURRENT]->(now:AgentChange)
       OPTIONAL MATCH (now)-[:REPLACES]->(retracted:AgentChange)
       WITH CASE WHEN now.op = 'forget' THEN retracted ELSE now END AS said
       WHERE EXISTS { (said)-[:CITES]->(:Item) }
         AND NOT EXISTS { (said)-[:CITES]->(i:Item)
                          WHERE NOT coalesce(i.erased, false) OR coalesce(i.expired, false) }
     }
  // (listed as a turn's `shownAgent` lists it: the key, and `@owner` for a private entry)
  WITH a, e, 'erased-' + randomUUID() AS opaque,
       CASE WHEN coalesce(e.owner, '') = '' THEN e.key ELSE e.key + '@' + e.owner END AS said,
       CASE WHEN e.owner = $person THEN $replacement ELSE e.owner END AS owner
  WITH a, e, opaque, said, owner,
       CASE WHEN coalesce(owner, '') = '' THEN opaque ELSE opaque + '@' + owner END AS listed
  CALL (e, said, listed) {
    MATCH (t:Turn)-[:SAW]->(:AgentChange)-[:OF_ENTRY]->(e)
    WITH DISTINCT t
    SET t.shownAgent = [k IN t.shownAgent | CASE WHEN k = said THEN listed ELSE k END]
  }
  CALL (e, opaque) {
    OPTIONAL MATCH (c:AgentChange)-[:OF_ENTRY]->(e)
    SET c.erased = true, c.content = null, c.beforeContent = null, c.key = opaque,
        c.about = CASE WHEN c.about = $person THEN $replacement ELSE c.about END,
        c.owner = CASE WHEN c.owner = $person THEN $replacement ELSE c.owner END,
        c.person = CASE WHEN c.person = $person THEN $replacement ELSE c.person END
    RETURN count(c) AS changes
  }
  CALL (a, e) {
    OPTIONAL MATCH (a)-[m:HAS_MEMORY]->(e)
    DELETE m
  }
  SET e.erased = true, e.content = null, e.key = opaque, e.owner = owner,
      e.about = CASE WHEN e.about = $person THEN $replacement ELSE e.about END,
      e.sourceSessions = [], e.sourceItems = [], e.sourceUids = [], e.sourcePersons = []
  RETURN count(e) AS entries, sum(changes) AS changes
}
// An entry the erasure leaves (a later change rests on other sources) keeps no content that
// rested only on erased items in its story: such a change's content, and the `before` of the
// change after it, become $withheld (`withheld`); the chain and its edges stay.
CALL (a) {
  OPTIONAL MATCH (a)-[:HAS_MEMORY]->(:AgentEntry)<-[:OF_ENTRY]-(c:AgentChange)
  WHERE NOT coalesce(c.withheld, false)
  OPTIONAL MATCH (c)-[:REPLACES]->(retracted:AgentChange)
  WITH c, CASE WHEN c.op = 'forget' THEN retracted ELSE c END AS said
  WHERE EXISTS { (said)-[:CITES]->(:Item) }
    AND NOT EXISTS { (said)-[:CITES]->(i:Item)
                     WHERE NOT coalesce(i.erased, false) OR coalesce(i.expired, false) }
  SET c.content = $withheld, c.withheld = true
  WITH c
  CALL (c) {
    OPTIONAL MATCH (after:AgentChange)-[:REPLACES]->(c)
    SET after.beforeContent = $withheld
  }
  RETURN count(c) AS withheld
}
SET a.memoryVersion = coalesce(a.memoryVersion, 0)
                      + CASE WHEN entries > 0 OR $advance THEN 1 ELSE 0 END,
    a.entryErasures = coalesce(a.entryErasures, 0)
                      + CASE WHEN entries + withheld > 0 THEN 1 ELSE 0 END
WITH a, entries, changes + withheld AS changes
OPTIONAL MATCH (er:Erasure {id: $erasure})
SET er.agentEntries = er.agentEntries + entries, er.changes = er.changes + changes
RETURN a.id AS erased
