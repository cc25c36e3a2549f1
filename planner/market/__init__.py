"""The market part of a plan: option rows, picks, suggestions, managed services and solving."""
