MATCH (o:Org {id: $org})
RETURN o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS org
