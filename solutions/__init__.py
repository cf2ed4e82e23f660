"""Reference solutions. Trusted: never copied into a sandbox or a student bundle."""
