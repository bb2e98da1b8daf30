// Up to $batch learning records of dropped changes written before a record named whom its
// change is about, whose proposal names someone: their ids and proposals, for the caller to
// read `about` from.
MATCH (:LearningJob)-[:DROPPED]->(d:DroppedChange)
WHERE d.about IS NULL AND d.proposal CONTAINS '"about": "'
RETURN elementId(d) AS id, d.proposal AS proposal
LIMIT $batch
