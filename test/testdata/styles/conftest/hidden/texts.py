POEM = "so much depends upon a red wheel barrow"
