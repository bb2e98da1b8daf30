// Live views: the versions a session made in the revisions after $after, up to $until, each
// with the revision it was made at (a configure, S15, or a run that kept nothing moves the
// revision, not the head).
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (v:Version)-[:OF]->(s)
WHERE v.revision > $after AND v.revision <= $until
RETURN v.revision AS revision, v.id AS head
ORDER BY revision
