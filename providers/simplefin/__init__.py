"""The SimpleFIN protocol (https://www.simplefin.org/protocol.html): setup tokens, access URLs,
account sets. `client` speaks HTTP, `parsing` turns account sets into typed values, `windows`
holds the pure date-window and request-budget rules the engine applies."""
