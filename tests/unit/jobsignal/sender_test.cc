// Attribution of a job-signal sender by its credentials: cgroup and environment under a procfs root, the owner of a
// loopback TCP connection through net/tcp and the fd links.
#include <gtest/gtest.h>

#include "fake_procfs.h"
#include "jobsignal/sender.h"

namespace gcm::jobsignal {
namespace {

using test::FakeProcfs;

TEST(JobSignalSender, JobRankAndGpuFromTheEnvironment) {
  FakeProcfs p;
  p.add_rank(100, "4242", 19, 3, "0,1,2,3");
  std::string why;
  auto s = identify_sender(p.root(), {100, 1000}, {}, &why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->job_id, "4242");
  EXPECT_EQ(s->rank, 19);
  EXPECT_EQ(s->local_rank, 3);
  EXPECT_EQ(s->gpu, 3);  // the local rank's position in CUDA_VISIBLE_DEVICES
  EXPECT_EQ(s->uid, 1000);
  EXPECT_FALSE(s->job_owner_uid);
}

TEST(JobSignalSender, TheCgroupWinsOverTheEnvironmentAndNamesTheOwner) {
  FakeProcfs p;
  // The process says job 1 in its environment; slurmstepd put it in job 4242 of uid 1000.
  p.add_rank(100, "1", 0, 0, "2", "4:devices:/slurm/uid_1000/job_4242/step_0/task_0");
  std::string why;
  auto s = identify_sender(p.root(), {100, 1000}, {}, &why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->job_id, "4242");
  ASSERT_TRUE(s->job_owner_uid);
  EXPECT_EQ(*s->job_owner_uid, 1000);
  EXPECT_EQ(s->gpu, 2);  // one visible device: that one
}

TEST(JobSignalSender, VisibleDevicesByUuidAndRenumberedBySlurm) {
  FakeProcfs p;
  p.add_process(100, {"SLURM_JOB_ID=7", "SLURM_PROCID=1", "SLURM_LOCALID=1", "CUDA_VISIBLE_DEVICES=GPU-b,GPU-a"});
  // Devices constrained: CUDA_VISIBLE_DEVICES counts within the step's GPUs 4-7.
  p.add_process(101, {"SLURM_JOB_ID=7", "SLURM_PROCID=2", "SLURM_LOCALID=1", "CUDA_VISIBLE_DEVICES=0,1",
                      "SLURM_STEP_GPUS=4,5"});
  // Not constrained: the same list as Slurm's, taken as it is.
  p.add_process(102, {"SLURM_JOB_ID=7", "SLURM_PROCID=3", "SLURM_LOCALID=0", "CUDA_VISIBLE_DEVICES=1,2",
                      "SLURM_JOB_GPUS=1,2"});
  std::string why;
  GpuUuids uuids = {{"GPU-a", 5}, {"GPU-b", 6}};
  EXPECT_EQ(identify_sender(p.root(), {100, 0}, uuids, &why)->gpu, 5);
  EXPECT_EQ(identify_sender(p.root(), {101, 0}, uuids, &why)->gpu, 5);
  auto s = identify_sender(p.root(), {102, 0}, uuids, &why);
  EXPECT_EQ(s->gpu, 1);
  EXPECT_EQ(gpu_of(*s, 1), 2);   // an Inspector point's GPU1
  EXPECT_EQ(gpu_of(*s, 5), -1);  // not one of its devices
}

TEST(JobSignalSender, WithoutAJobOrAnEnvironmentTheSenderIsUnknown) {
  FakeProcfs p;
  p.add_process(100, {"HOME=/root"});
  std::string why;
  EXPECT_FALSE(identify_sender(p.root(), {100, 0}, {}, &why));
  EXPECT_NE(why.find("belongs to no Slurm job"), std::string::npos) << why;
  EXPECT_FALSE(identify_sender(p.root(), {555, 0}, {}, &why));  // gone
  EXPECT_NE(why.find("cannot be read"), std::string::npos) << why;
  EXPECT_FALSE(identify_sender(p.root(), {-1, 0}, {}, &why));
}

TEST(JobSignalSender, TheCacheKnowsAProcessByItsPidAndStartTime) {
  FakeProcfs p;
  p.add_rank(100, "4242", 7, 0, "0");
  p.stat(100, 5000);
  EXPECT_EQ(process_start_time(p.root(), 100), 5000u);
  SenderCache cache(60);
  std::string why;
  EXPECT_EQ(cache.identify(p.root(), {100, 1000}, {}, &why, 0)->rank, 7);
  p.add_rank(100, "4242", 8, 0, "0");  // the same process: its answer is kept
  EXPECT_EQ(cache.identify(p.root(), {100, 1000}, {}, &why, 1)->rank, 7);
  EXPECT_EQ(cache.identify(p.root(), {100, 1000}, {}, &why, 61)->rank, 8) << "past the TTL it is read again";
  p.add_rank(100, "9", 0, 0, "0");
  p.stat(100, 6000);  // the pid reused by another process
  EXPECT_EQ(cache.identify(p.root(), {100, 1000}, {}, &why, 62)->job_id, "9");
  p.add_rank(100, "10", 0, 0, "0");
  EXPECT_EQ(cache.identify(p.root(), {100, 1001}, {}, &why, 63)->job_id, "10") << "another uid is asked again";
}

TEST(JobSignalSender, TheTcpPeerIsTheProcessHoldingItsSocket) {
  FakeProcfs p;
  p.add_rank(200, "4242", 0, 0, "0");
  p.add_rank(201, "4242", 1, 1, "1");
  p.hold_socket(200, 7, 11111);
  p.hold_socket(201, 9, 22222);
  // 127.0.0.1:50000 -> 127.0.0.1:4318 (0x10DE) is the agent's own accepted side listed too; the client side of each
  // connection has the peer's port as its local port.
  p.net_tcp(
      "   0: 0100007F:10DE 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 999 1\n"
      "   1: 0100007F:C350 0100007F:10DE 01 00000000:00000000 00:00000000 00000000     0        0 11111 1\n"
      "   2: 0100007F:C351 0100007F:10DE 01 00000000:00000000 00:00000000 00000000     0        0 22222 1\n"
      "   3: 0100007F:10DE 0100007F:C351 01 00000000:00000000 00:00000000 00000000     0        0 33333 1\n");
  auto a = tcp_peer_process(p.root(), "127.0.0.1", 50001, "127.0.0.1", 4318);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->pid, 201);
  EXPECT_EQ(a->uid, 0);
  EXPECT_EQ(tcp_peer_process(p.root(), "127.0.0.1", 50000, "127.0.0.1", 4318)->pid, 200);
  EXPECT_FALSE(tcp_peer_process(p.root(), "127.0.0.1", 50002, "127.0.0.1", 4318));  // no such connection
}

TEST(JobSignalSender, AnIpv6PeerIsFoundInTcp6) {
  FakeProcfs p;
  p.add_rank(300, "4242", 0, 0, "0");
  p.add_rank(301, "4242", 1, 1, "1");
  p.hold_socket(300, 5, 44444);
  p.hold_socket(301, 6, 55555);
  p.net_tcp("   0: 0100007F:10DE 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 999 1\n");
  // [::1]:50000 -> [::1]:4318, and ::ffff:127.0.0.1:50001 -> ::ffff:127.0.0.1:4318 (a v4 client of a v6 socket).
  p.net_tcp(
      "   0: 00000000000000000000000001000000:10DE 00000000000000000000000000000000:0000 0A 00000000:00000000 "
      "00:00000000 00000000     0        0 998 1\n"
      "   1: 00000000000000000000000001000000:C350 00000000000000000000000001000000:10DE 01 00000000:00000000 "
      "00:00000000 00000000     0        0 44444 1\n"
      "   2: 0000000000000000FFFF00000100007F:C351 0000000000000000FFFF00000100007F:10DE 01 00000000:00000000 "
      "00:00000000 00000000     0        0 55555 1\n",
      "tcp6");
  auto a = tcp_peer_process(p.root(), "::1", 50000, "::1", 4318);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->pid, 300);
  EXPECT_EQ(a->uid, 0);
  // The listener's text may be bracketed or uncompressed: the same address.
  EXPECT_EQ(tcp_peer_process(p.root(), "[0:0:0:0:0:0:0:1]", 50000, "[::1]", 4318)->pid, 300);
  auto mapped = tcp_peer_process(p.root(), "::ffff:127.0.0.1", 50001, "::ffff:127.0.0.1", 4318);
  ASSERT_TRUE(mapped);
  EXPECT_EQ(mapped->pid, 301);
  EXPECT_FALSE(tcp_peer_process(p.root(), "::1", 50001, "::1", 4318));       // no such connection
  EXPECT_FALSE(tcp_peer_process(p.root(), "127.0.0.1", 50000, "::1", 4318));  // another family's address
}

TEST(JobSignalSender, AMalformedSocketTableLineIsSkipped) {
  FakeProcfs p;
  p.add_rank(300, "4242", 0, 0, "0");
  p.hold_socket(300, 5, 44444);
  p.net_tcp(
      "   0: 000000000000000000000000010000:C350 00000000000000000000000001000000:10DE 01 0:0 0:0 0 1000 0 44444 1\n"
      "   1: 0000000000000000000000000100000G:C350 00000000000000000000000001000000:10DE 01 0:0 0:0 0 1000 0 44444 1\n",
      "tcp6");
  EXPECT_FALSE(tcp_peer_process(p.root(), "::1", 50000, "::1", 4318));
}

}  // namespace
}  // namespace gcm::jobsignal
