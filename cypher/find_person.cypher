// A person of the org. A person whose erasure runs (`erasing`, set by begin_erasure) is none:
// an agent entry about them, made after the erasure went through its agent, would outlive it.
// Nor is what an erasure left of one (`erased`, named by its opaque id).
MATCH (p:Person {org: $org, id: $person})
WHERE p.erasing IS NULL AND p.erased IS NULL
RETURN p.id AS person
