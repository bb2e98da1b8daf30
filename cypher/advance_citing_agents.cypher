// The agents whose entries' kept sources an erasure of items ($cited, their uids) changes: an
// entry in an agent's memory whose CURRENT change cites one of them. Each memory's version
// grows, as when an erasure takes an entry: the memory shows other sources now, so a command at
// the version read before is refused, no kept snapshot of it is used again, and its watchers
// are sent it. Run before keep_agent_sources, so the agent's lock is taken before its entries'
// (a writer takes an agent, then its entries). How many.
UNWIND $cited AS uid
MATCH (:Item {uid: uid})<-[:CITES]-(:AgentChange)<-[:CURRENT]-(e:AgentEntry)
      <-[:HAS_MEMORY]-(a:Agent)
WHERE NOT coalesce(e.erased, false)
WITH DISTINCT a
ORDER BY a.id
SET a.memoryVersion = coalesce(a.memoryVersion, 0) + 1
RETURN count(a) AS advanced
