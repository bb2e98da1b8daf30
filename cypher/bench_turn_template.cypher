// Benchmark loader only (bench/loader.py): what a turn the service recorded names and was
// shown, so that the turns loaded after it on the same session repeat it exactly.
MATCH (t:Turn {id: $turn})
RETURN t.model AS model, t.shown AS shown, t.shownAgent AS shownAgent,
       [(t)-[:SAW]->(c:Change) | c.id] AS saw, [(t)-[:SAW]->(c:AgentChange) | c.id] AS sawAgent
