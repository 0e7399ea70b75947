Hello, {{name}}!
