from .stats import slugify, Counter2, ParseError, parse, Color, Point, shout, Word, apply, log_it, warn_it, collect, read_file, Tagged
