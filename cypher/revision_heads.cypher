// Live views: the versions a session made in the revisions after $after, up to $until, each
// with the revision it was made at (a configure, S15, or a run that kept nothing moves the
// revision, not the head).
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (v:Version)-[:OF]->(s)
WHERE v.revision > $after AND v.revision <= $until
RETURN v.revision AS revision, v.id AS head
ORDER BY revision
