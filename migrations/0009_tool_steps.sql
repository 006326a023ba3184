-- Tool calls stored with the conversation (issue 11). An assistant reply of a tool-using
-- template keeps the tool rounds that led to it as JSON: an array of
-- {"text"?, "calls": [{"id","name","arguments","ok","output"}]}, oldest first. Later
-- turns replay them into the prompt in the provider's format (OpenAI `tool_calls` +
-- `tool` messages; Ollama's `tool_calls` + `tool`). NULL: no tools were called.
ALTER TABLE messages ADD COLUMN tool_steps TEXT;
