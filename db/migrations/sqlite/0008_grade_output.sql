-- What only the requester may read of a grade, apart from its report: the
-- runner's output and the real names of parametrized cases quote the
-- hidden tests, the rest (verdict, counts, ids, signals) the check run
-- already says. requester_only holds {"output", "output_truncated",
-- "case_names"}; report no longer has them. Reports kept before move
-- over; earlier attempts keep none. Keep in step with
-- migrations/postgres/0008_grade_output.sql.
ALTER TABLE grades ADD COLUMN requester_only TEXT CHECK (requester_only IS NULL OR json_valid(requester_only));
UPDATE grades SET
    requester_only = json_object(
        'output', json_extract(report, '$.output'),
        'output_truncated', json(CASE WHEN json_extract(report, '$.output_truncated') THEN 'true' ELSE 'false' END),
        'case_names', json(coalesce(json_extract(report, '$.case_names'), 'null'))),
    report = json_remove(report, '$.output', '$.output_truncated', '$.case_names')
WHERE report IS NOT NULL AND json_type(report) = 'object';
UPDATE grade_attempts SET report = json_remove(report, '$.output', '$.output_truncated', '$.case_names')
WHERE report IS NOT NULL AND json_type(report) = 'object';
