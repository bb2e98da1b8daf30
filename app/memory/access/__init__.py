"""Who may do what: bearer tokens and the org each principal acts in."""
