// slurmrestd's job accounting (GET /slurmdb/vX/jobs?state=running) written as the
// `sacct -P -s running,r --delimiter D -a -o all --duplicates --noconvert` output that sacct_running reads, so that
// the collector builds its Sacct records with the same code whichever back end answered. The layout read is API
// v0.0.38's (Slurm 22.05, recorded on the testbed): one record per job with its `steps` list, times in unix seconds
// (0 for unset), TRES lists as [{type, name, id, count}].
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/time_zone.h"
#include "slurm/parse_error.h"

namespace gcm::slurm {

// The header of the columns of `sacct -o all` that v0.0.38 can give, in sacct's order and with its names, then a
// row per job followed by a row per step of it (123, 123.batch, 123.extern, 123.0, ...), every value as sacct
// --noconvert prints it: times naive in `zone` ("2026-12-04T18:46:14", "Unknown" for unset), durations as
// [D-]HH:MM:SS (TotalCPU, UserCPU and SystemCPU as sacct's MM:SS.mmm below an hour, a job's the sum of its
// steps'), memory in MB with an "M" ("mem=1000M"), TRES lists sorted by name, exit codes as "code:signal", NodeList
// as slurmrestd's hostlist expression. Columns the API has no key for are not in the header (the collector makes them
// null): DBIndex, GID, UID, QOSRAW, WCKeyID and the node and task of every per-task usage maximum and minimum
// (MaxRSSNode, MinCPUTask, TRESUsageInMaxNode, ...); AssocID and SubmitLine on v0.0.38 only (an answer whose jobs
// carry association.id and submit_line has them, a newline in the submit line as sacct_running's literal \n). A newline or `delimiter` inside a value is written as
// a blank, so that a value cannot break its row. Throws ParseError naming the job (and step) and the key.
std::string render_sacct_running(std::string_view jobs_json, std::string_view delimiter, const TimeZone& zone);

// The columns render_sacct_running writes for an answer of the given Slurm release, in order (AssocID and SubmitLine
// from 23.02, whose slurmrestd serves v0.0.39 and later; 22.05's v0.0.38 has neither): the sacct of 24.11 and later
// names Reserved, ResvCPU and ResvCPURAW Planned, PlannedCPU and PlannedCPURAW.
std::vector<std::string_view> rest_sacct_columns(std::pair<int, int> release = {22, 5});

}  // namespace gcm::slurm
