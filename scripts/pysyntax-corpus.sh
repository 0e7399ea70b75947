#!/bin/sh
# pysyntax-corpus.sh DEST MIRROR...: unpacks the newest commit of each
# fetched repository (a bare git directory, as the fetch tool leaves them
# in /work/.mirror/OWNER+NAME/repo) into DEST/OWNER+NAME, for
# TestCheckPythonSyntaxOnACorpus:
#   scripts/pysyntax-corpus.sh /tmp/corpus /work/.mirror/*+*/repo
#   TESTFIRST_PYSYNTAX_CORPUS=/tmp/corpus go test -count=1 -v -run OnACorpus ./grader/detect/
set -eu
dest=$1
shift
for repo in "$@"; do
	name=$(basename "$(dirname "$repo")")
	mkdir -p "$dest/$name"
	git --git-dir="$repo" archive HEAD | tar -x -C "$dest/$name"
done
