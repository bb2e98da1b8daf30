// $changes holds only the fields the caller sent; a null value removes the setting.
MATCH (o:Org {id: $org})
SET o += $changes
RETURN o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS org
