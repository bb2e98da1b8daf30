// A person of the org. A person whose erasure runs (`erasing`, set by begin_erasure) is none:
// an agent entry about them, made after the erasure went through its agent, would outlive it.
MATCH (p:Person {org: $org, id: $person})
WHERE p.erasing IS NULL
RETURN p.id AS person
