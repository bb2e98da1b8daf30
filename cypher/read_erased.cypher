// Whether an erasure reached anything a run's or learning job's model read, since it read it:
// an item it read ($uids: those that were no tombstone then; a tombstone now), an item it read
// as one retention emptied ($expired: it still named its author; an erasure has made it its
// own since, `expired` removed), or a change of session or agent memory it was shown
// (erased, or its content withheld), or an agent change whose content rests only on erased
// items (as erase_agent_entries finds them: an erasure erases its sessions' items before, in
// later transactions, the agent entries resting on them alone). A run or job that read erased
// content applies nothing of what its model answered: any change may carry what it read.
// The items are locked first, so an erasure or retention going through them meanwhile (not
// yet committed) has committed by then and is seen: the run's session lock alone does not
// hold it off (a fork reads its source's items; an erasure empties an item its person wrote
// in another's session under the item's own lock).
CALL () {
  UNWIND $uids + $expired AS readUid
  WITH readUid ORDER BY readUid
  MATCH (i:Item {uid: readUid})
  SET i._lock = true
  REMOVE i._lock
}
RETURN EXISTS { MATCH (i:Item) WHERE i.uid IN $uids AND coalesce(i.erased, false) }
    OR EXISTS { MATCH (i:Item) WHERE i.uid IN $expired AND coalesce(i.erased, false)
                  AND i.expired IS NULL }
    OR EXISTS { MATCH (c:Change) WHERE c.id IN $changes AND coalesce(c.erased, false) }
    OR EXISTS { MATCH (c:AgentChange) WHERE c.id IN $changes
                  AND (coalesce(c.erased, false) OR coalesce(c.withheld, false)) }
    OR EXISTS { MATCH (c:AgentChange) WHERE c.id IN $changes
                OPTIONAL MATCH (c)-[:REPLACES]->(retracted:AgentChange)
                WITH CASE WHEN c.op = 'forget' THEN retracted ELSE c END AS said
                WHERE EXISTS { (said)-[:CITES]->(:Item) }
                  AND NOT EXISTS { (said)-[:CITES]->(i:Item)
                                   WHERE NOT coalesce(i.erased, false)
                                      OR coalesce(i.expired, false) } } AS erased
