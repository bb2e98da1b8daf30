// Whether an erasure reached anything a run's or learning job's model read, since it read it:
// an item it read ($uids: those that were no tombstone then; a tombstone now), an item it read
// as one retention emptied ($expired: it still named its author; an erasure has made it its
// own since, `expired` removed), or a change of session or agent memory it was shown
// (erased, or its content withheld). A run or job that read erased content applies nothing of
// what its model answered: any change may carry what it read.
RETURN EXISTS { MATCH (i:Item) WHERE i.uid IN $uids AND coalesce(i.erased, false) }
    OR EXISTS { MATCH (i:Item) WHERE i.uid IN $expired AND coalesce(i.erased, false)
                  AND i.expired IS NULL }
    OR EXISTS { MATCH (c:Change) WHERE c.id IN $changes AND coalesce(c.erased, false) }
    OR EXISTS { MATCH (c:AgentChange) WHERE c.id IN $changes
                  AND (coalesce(c.erased, false) OR coalesce(c.withheld, false)) } AS erased
