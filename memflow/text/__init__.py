"""Text shared by ingest and recall, no database: parsed documents and their chunks, sentence
splitting, and time-expression parsing (documents' dates and queries' time spans)."""
