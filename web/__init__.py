"""Web pages of the arena: server-rendered templates over the services and the JSON API."""
