// Package jobs holds the pipeline's durable work: the webhook intake,
// which records each delivery with the job that handles it, and the River
// workers that handle deliveries, sync tickets with the hidden-test store,
// run base checks and grades, and sweep GitHub's delivery log; and, on each
// grading replica, the sweep of its engine's leftover sandboxes. The rules
// they follow live in package pipeline; jobs carries them out against the
// database, GitHub, the store and the sealed grader.
package jobs
