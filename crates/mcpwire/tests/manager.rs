//! The manager through the facade: configuration entries made into servers.
