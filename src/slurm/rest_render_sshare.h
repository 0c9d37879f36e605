// slurmrestd's fair-share tree (GET /slurm/vX/shares, API v0.0.39 and later) written as the `sshare -a -P` output the
// sshare collector reads, so that the collector builds its SsharePayload records with the same code whichever back end
// answered (the counterpart of slurm/rest_render.h for the shares endpoint). Written from Slurm's documentation and
// schemas, not from a recording: no Slurm with /shares (23.02+) runs here (tests/fixtures/slurmrestd-shares/).
#pragma once

#include <string>
#include <string_view>

#include "slurm/parse_error.h"

namespace gcm::slurm {

// The answer ({"shares": {"shares": [association...], "total_shares": N}}) as `sshare -a -P` prints it with the
// priority/multifactor plugin's Fair Tree (Slurm's default): the header
// "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare" and a row per association in the order given.
// Account is indented by the association's depth in the tree, one blank per level, found from the parent links as
// sshare finds it (an account one deeper than its parent, root and an account whose parent is not listed before it at
// none; a user's row shows its account's name one deeper than the account); User is the user's name or empty for an
// account; RawShares is "parent" for Fairshare=parent and empty when unset; NormShares, EffectvUsage and FairShare are
// "%f", RawUsage a whole number, each empty when unset; FairShare is a user's only, as Fair Tree prints it (under
// PriorityFlags=NO_FAIR_TREE, sshare computes one for accounts too: not written here). Numbers are read plain or as
// {set, infinite, number}. Throws ParseError naming the association and the key.
std::string render_sshare(std::string_view shares_json);

}  // namespace gcm::slurm
