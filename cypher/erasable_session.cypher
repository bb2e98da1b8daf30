// Whether session $id is one the caller may delete: of their org and, for a person, theirs;
// and whether it is erased already (a deletion that stopped before its agents' part, or an
// erasure of its person).
MATCH (s:Session {id: $id})-[:OF_AGENT|ERASED_FROM]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
RETURN s.id AS id, coalesce(s.erased, false) AS erased
