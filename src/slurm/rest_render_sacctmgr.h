// slurmrestd's accounting answers (/slurmdb/vX/...) written as the sacctmgr output the sacctmgr_qos and sacctmgr_user
// collectors read, so that a collector parses one format whichever back end answered (the counterpart of
// slurm/rest_render.h for slurmctld's endpoints). The layouts read are those of API v0.0.38 to v0.0.44 (Slurm 22.05,
// 24.11 and 25.11, recorded on the testbed): numbers plain or null for unset and unlimited (v0.0.38) or
// {set, infinite, number}, TRES lists as [{type, name, id, count}]. A limit whose key the answer lacks is written
// empty, as sacctmgr writes an unset one, so the golden tests on every recorded version (a QOS that sets every limit)
// are what keeps a renamed key from going unseen. Throws ParseError naming the record and the key.
#pragma once

#include <string>
#include <string_view>

#include "slurm/parse_error.h"

namespace gcm::slurm {

// GET /slurmdb/vX/qos as `sacctmgr show qos -P`: the header of its default columns (Name, Priority, GraceTime, ...,
// MinTRES: 26, and 28 from Slurm 24.11, which adds MaxTRESRunMinsPA and MaxTRESRunMinsPU; the answer's meta names
// the release) and a row per QOS, each value written as sacctmgr prints it: times as [D-]HH:MM:SS, TRES lists as
// "cpu=8,gres/gpu=4,mem=64G" (sorted; memory in sacctmgr's units), flags and preemption modes with sacctmgr's words,
// the preemptable QOS names sorted, unset limits empty. GrpTRESMins and GrpSubmit are empty before API v0.0.42,
// which has no key for them.
std::string render_sacctmgr_qos(std::string_view qos_json);

// GET /slurmdb/vX/users as `sacctmgr show user format=User -nP`: a user name per line, in the order slurmrestd lists
// them.
std::string render_sacctmgr_users(std::string_view users_json);

// GET /slurmdb/vX/associations?user=U as `sacctmgr show user U withassoc
// format=User,DefaultAccount,Account,DefaultQOS,QOS -P`: the header as Slurm 22.05's sacctmgr prints it
// ("User|Def Acct|Account|Def QOS|QOS", the keys GCM's records carry) and a row per association of the user, where
// Def Acct is the account of the user's default association and QOS the sorted names. Associations of other users in
// the answer are left out.
std::string render_sacctmgr_user_assoc(std::string_view associations_json, std::string_view user);

}  // namespace gcm::slurm
