-- What only the requester may read of a grade, apart from its report: the
-- runner's output and the real names of parametrized cases quote the
-- hidden tests, the rest (verdict, counts, ids, signals) the check run
-- already says. requester_only holds {"output", "output_truncated",
-- "case_names"}; report no longer has them. Reports kept before move
-- over; earlier attempts keep none. Keep in step with
-- migrations/sqlite/0008_grade_output.sql.
ALTER TABLE grades ADD COLUMN requester_only JSONB;
UPDATE grades SET
    requester_only = jsonb_build_object(
        'output', report->'output',
        'output_truncated', coalesce(report->'output_truncated', 'false'::jsonb),
        'case_names', report->'case_names'),
    report = report - 'output' - 'output_truncated' - 'case_names'
WHERE report IS NOT NULL AND jsonb_typeof(report) = 'object';
UPDATE grade_attempts SET report = report - 'output' - 'output_truncated' - 'case_names'
WHERE report IS NOT NULL AND jsonb_typeof(report) = 'object';
