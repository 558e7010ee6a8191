"""Publishing: the pages, the export and its schema, the finder, the MkDocs hooks."""
