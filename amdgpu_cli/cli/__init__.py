"""Command-line front ends. Each command parses flags, calls one library function, renders."""
