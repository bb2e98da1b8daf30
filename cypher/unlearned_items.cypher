// Of these items, those no learning job has learned from yet.
UNWIND $uids AS uid
MATCH (i:Item {uid: uid})
WHERE NOT EXISTS { (i)<-[:LEARNED]-(:LearningJob) }
RETURN i.uid AS uid
