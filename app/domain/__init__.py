"""The domain's values: pure (the standard library and `app.errors`), below memory and store."""
