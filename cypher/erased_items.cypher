// Of these items, those erased (tombstones): a run or job that read one before it was erased
// applies nothing of what it read.
UNWIND $uids AS uid
MATCH (i:Item {uid: uid})
WHERE i.erased
RETURN i.uid AS uid
