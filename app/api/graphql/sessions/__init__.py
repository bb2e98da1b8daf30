"""Sessions: their views, memory, entries and the changes behind them, versions, mutations."""
