// The placement rule of work packages (src/packages/placement.hpp), serially: the running median
// of a device's package times, who takes the packages left (equal speeds, a device a thousand
// times slower, a device not measured yet, the last package, an overdue device, a failed one),
// the home queues split by speed and the prefetch depth from transfer and compute times.
#include <gtest/gtest.h>

#include <limits>
#include <numeric>
#include <vector>

#include "packages/placement.hpp"

namespace hit::detail {
namespace {

DeviceOutlook idle(double per_package_s) {
  return {.per_package_s = per_package_s, .free_at_s = 0, .held = 0, .working = true};
}

// A device busy with `held` packages from time 0.
DeviceOutlook busy(double per_package_s, std::int64_t held) {
  return {.per_package_s = per_package_s,
          .free_at_s = static_cast<double>(held) * per_package_s,
          .held = held,
          .working = true};
}

TEST(PackageProfile, OneSlowPackageDoesNotMoveTheEstimate) {
  PackageProfile p;
  EXPECT_FALSE(p.known());
  EXPECT_EQ(p.seconds(), 0);
  p.observe(0.010);
  EXPECT_DOUBLE_EQ(p.seconds(), 0.010);
  // Two samples: the quicker (the first package of a run pays one-off costs).
  p.observe(1.0);
  EXPECT_DOUBLE_EQ(p.seconds(), 0.010);
  // Three: the median.
  p.observe(0.012);
  EXPECT_DOUBLE_EQ(p.seconds(), 0.012);
  EXPECT_EQ(p.samples(), 3u);
}

TEST(PackageProfile, FollowsASpeedChangeWithinItsWindow) {
  PackageProfile p;
  for (int i = 0; i < 20; ++i) p.observe(0.01);
  // The device becomes 10x slower: after half the window, the median follows.
  for (std::size_t i = 0; i < PackageProfile::window / 2; ++i) p.observe(0.1);
  EXPECT_DOUBLE_EQ(p.seconds(), 0.01);
  p.observe(0.1);
  EXPECT_DOUBLE_EQ(p.seconds(), 0.1);
}

TEST(PackageProfile, IgnoresWhatIsNotATime) {
  PackageProfile p;
  p.observe(0);
  p.observe(-1);
  p.observe(std::numeric_limits<double>::infinity());
  p.observe(std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(p.known());
  p.prime(0.5);
  EXPECT_DOUBLE_EQ(p.seconds(), 0.5);
}

TEST(PackagesToTake, NothingLeftNothingTaken) {
  const std::vector<DeviceOutlook> d = {idle(1), idle(1)};
  EXPECT_EQ(packages_to_take(d, 0, 0, 0), 0);
  EXPECT_EQ(packages_to_take(d, 5, 10, 0), 0);  // no such device
}

TEST(PackagesToTake, EqualSpeedsShareEvenly) {
  const std::vector<DeviceOutlook> d = {idle(1), idle(1), idle(1)};
  EXPECT_EQ(packages_to_take(d, 0, 30, 0), 10);
  EXPECT_EQ(packages_to_take(d, 2, 30, 0), 10);
}

TEST(PackagesToTake, EqualSpeedsTheLastPackageIsWantedByEveryIdleDevice) {
  // A tie: both would finish it at the same time. Claims are atomic, so both asking is harmless;
  // both declining would leave it to nobody.
  const std::vector<DeviceOutlook> d = {idle(0.25), idle(0.25)};
  EXPECT_EQ(packages_to_take(d, 0, 1, 3.0), 1);
  EXPECT_EQ(packages_to_take(d, 1, 1, 3.0), 1);
}

TEST(PackagesToTake, AThousandTimesSlowerDeviceLeavesTheRunToTheFastOne) {
  const std::vector<DeviceOutlook> d = {idle(0.001), idle(1.0)};
  // The fast device does 100 packages in 0.1 s; the slow one would finish one at 1 s.
  EXPECT_EQ(packages_to_take(d, 1, 100, 0), 0);
  EXPECT_EQ(packages_to_take(d, 0, 100, 0), 100);
  // With 3000 left, the slow one takes what it finishes before the fast one finishes the rest:
  // 2 (by t = 2.998 s the fast one has done 2998 and the slow one 2).
  EXPECT_EQ(packages_to_take(d, 1, 3000, 0), 2);
  EXPECT_EQ(packages_to_take(d, 0, 3000, 0), 2998);
}

TEST(PackagesToTake, TheLastPackageGoesWhereItFinishesFirst) {
  // The fast device holds 5 packages (free at 5 s, then 1 s a package): the last package would end
  // there at 6 s. A device 3x slower finishes it at 3 s and takes it; one 20x slower does not.
  const std::vector<DeviceOutlook> d = {busy(1, 5), idle(3), idle(20)};
  EXPECT_EQ(packages_to_take(d, 1, 1, 0), 1);
  EXPECT_EQ(packages_to_take(d, 2, 1, 0), 0);
  EXPECT_EQ(packages_to_take(d, 0, 1, 0), 0);
  // Later, the fast device free: it takes it itself.
  EXPECT_EQ(packages_to_take(d, 0, 1, 5.0), 1);
  EXPECT_EQ(packages_to_take(d, 1, 1, 5.0), 0);
}

TEST(PackageProfile, TheCautiousEstimateIsTheSecondLongest) {
  PackageProfile p;
  p.observe(0.01);
  EXPECT_DOUBLE_EQ(p.cautious_seconds(), 0.01);
  p.observe(0.05);
  EXPECT_DOUBLE_EQ(p.cautious_seconds(), 0.05);
  for (const double t : {0.01, 0.01, 0.02, 0.01, 0.01}) p.observe(t);
  // One stalled package does not count; the expensive one after it does.
  p.observe(9.0);
  EXPECT_DOUBLE_EQ(p.cautious_seconds(), 0.05);
  EXPECT_DOUBLE_EQ(p.seconds(), 0.01);
}

TEST(PackagesToTake, ASlowDevicePlansWithItsCautiousTime) {
  // Typically 3 s a package, but some took 12 s: with the fast device free at 5 s (6 s for the
  // last package), the slow one would take it on its typical time, not on its cautious one.
  std::vector<DeviceOutlook> d = {busy(1, 5), idle(3)};
  EXPECT_EQ(packages_to_take(d, 1, 1, 0), 1);
  d[1].cautious_s = 12;
  EXPECT_EQ(packages_to_take(d, 1, 1, 0), 0);
  // The fastest device is not held to its cautious time.
  d[0].cautious_s = 100;
  EXPECT_EQ(packages_to_take(d, 0, 1, 5.0), 1);
}

TEST(PackagesToTake, ADeviceWithNoProfileTakesOnePackageToBeMeasured) {
  const std::vector<DeviceOutlook> d = {idle(0.001), idle(0)};
  EXPECT_EQ(packages_to_take(d, 1, 1000, 0), 1);
  // The others do not count it as capacity: the fast device plans to do everything.
  EXPECT_EQ(packages_to_take(d, 0, 1000, 0), 1000);
}

TEST(PackagesToTake, UnmeasuredDevicesHoldOnePackageUntilMeasured) {
  std::vector<DeviceOutlook> d = {idle(0.001), idle(0)};
  d[1].held = 1;
  EXPECT_EQ(packages_to_take(d, 1, 1000, 0), 0);
}

TEST(PackagesToTake, NobodyMeasuredYetCountsAsEquallyFast) {
  // The first packages of a first run: the devices share what is left evenly, by backlog.
  std::vector<DeviceOutlook> d = {idle(0), idle(0)};
  EXPECT_EQ(packages_to_take(d, 0, 10, 0), 5);
  d[1].held = 4;
  EXPECT_EQ(packages_to_take(d, 0, 10, 0), 7);
  EXPECT_EQ(packages_to_take(d, 1, 10, 0), 3);
}

TEST(PackagesToTake, AFailedDeviceTakesNothingAndCountsForNothing) {
  std::vector<DeviceOutlook> d = {idle(1), idle(1)};
  d[1].working = false;
  EXPECT_EQ(packages_to_take(d, 1, 10, 0), 0);
  EXPECT_EQ(packages_to_take(d, 0, 10, 0), 10);
}

TEST(PackagesToTake, AnOverdueDeviceIsNotTakenToBeFree) {
  // The fast device expected to be free at 1 s, still holds 2 packages at 10 s (a stalled one):
  // it is taken to need 2 more of its packages (free at 12 s), so a device 5x slower that
  // finishes the last package at 15 s does not take it, but one 1.5x slower (11.5 s) does.
  const std::vector<DeviceOutlook> d = {
      {.per_package_s = 1, .free_at_s = 1, .held = 2}, idle(5), idle(1.5)};
  EXPECT_EQ(packages_to_take(d, 1, 1, 10.0), 0);
  EXPECT_EQ(packages_to_take(d, 2, 1, 10.0), 1);
  // Taken to be free when it holds nothing.
  const std::vector<DeviceOutlook> done = {{.per_package_s = 1, .free_at_s = 1, .held = 0},
                                           idle(1.5)};
  EXPECT_EQ(packages_to_take(done, 1, 1, 10.0), 0);
}

TEST(PackagesToTake, SharesFollowSpeedsAndBacklogs) {
  // Speeds 4:2:1 and 70 packages: 40, 20, 10.
  const std::vector<DeviceOutlook> d = {idle(0.25), idle(0.5), idle(1)};
  EXPECT_EQ(packages_to_take(d, 0, 70, 0), 40);
  EXPECT_EQ(packages_to_take(d, 1, 70, 0), 20);
  EXPECT_EQ(packages_to_take(d, 2, 70, 0), 10);
  // The total never exceeds what is left by more than the ties.
  for (index_t left : {1, 2, 3, 7, 8, 69, 71}) {
    index_t sum = 0;
    for (std::size_t me = 0; me < d.size(); ++me) sum += packages_to_take(d, me, left, 0);
    EXPECT_GE(sum, left) << left;
    EXPECT_LE(sum, left + 2) << left;
  }
}

TEST(PackagesToTake, SomeDeviceAlwaysTakesWhatIsLeft) {
  // Whatever the speeds and backlogs, at least one working device wants a package: no package is
  // left to nobody.
  const std::vector<double> speeds = {0.001, 0.003, 0.1, 1, 7, 1000};
  for (const double a : speeds) {
    for (const double b : speeds) {
      for (std::int64_t held = 0; held < 4; ++held) {
        const std::vector<DeviceOutlook> d = {busy(a, held), idle(b), busy(b, 1)};
        for (index_t left : {1, 2, 5}) {
          index_t sum = 0;
          for (std::size_t me = 0; me < d.size(); ++me) sum += packages_to_take(d, me, left, 0);
          EXPECT_GE(sum, 1) << a << " " << b << " " << held << " " << left;
        }
      }
    }
  }
}

TEST(SplitBySpeed, SharesAreProportionalAndSumToTheCount) {
  EXPECT_EQ(split_by_speed(10, std::vector<double>{1, 1, 1}), (std::vector<index_t>{4, 3, 3}));
  EXPECT_EQ(split_by_speed(100, std::vector<double>{1, 0.5, 0.5}),
            (std::vector<index_t>{50, 25, 25}));
  EXPECT_EQ(split_by_speed(100, std::vector<double>{1, 0.01, 0.01}),
            (std::vector<index_t>{98, 1, 1}));
  const std::vector<index_t> odd = split_by_speed(97, std::vector<double>{0.3, 1.7, 2.9, 0.1});
  EXPECT_EQ(std::accumulate(odd.begin(), odd.end(), index_t{0}), 97);
}

TEST(SplitBySpeed, AFailedDeviceGetsNoneAndUnknownSpeedsAreEqual) {
  EXPECT_EQ(split_by_speed(9, std::vector<double>{1, 0, 2}), (std::vector<index_t>{3, 0, 6}));
  EXPECT_EQ(split_by_speed(7, std::vector<double>{0, 0}), (std::vector<index_t>{4, 3}));
  EXPECT_EQ(split_by_speed(0, std::vector<double>{1, 2}), (std::vector<index_t>{0, 0}));
  EXPECT_TRUE(split_by_speed(5, std::vector<double>{}).empty());
}

TEST(DevicesTakingPart, ADeviceThatCannotFinishOnePackageBeforeTheOthersFinishAllIsLeftOut) {
  const auto part = [](std::vector<double> slowness, index_t count) {
    return devices_taking_part(slowness, count);
  };
  // 45 packages: the quickest alone takes 45 of its packages; one 100 times slower would end its
  // first package after that, one 20 times slower well before.
  EXPECT_EQ(part({1, 100, 100}, 45), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(part({1, 20, 20}, 45), (std::vector<bool>{true, true, true}));
  // The others' speed counts every other device, the other slow one included: 44 packages over
  // speeds 1 + 1/44 end at 43.0 package times, so a device 43.5 times slower is out, 42 times
  // not (and beside one 42 times slower, one 44 times slower is out).
  EXPECT_EQ(part({1, 44, 43.5}, 44), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(part({1, 44, 42}, 44), (std::vector<bool>{true, false, true}));
}

TEST(DevicesTakingPart, EqualDevicesTakePartEvenWithFewerPackagesThanDevices) {
  // The others compute whole packages: two packages over four equal devices end after one
  // package, when every device would end its own.
  EXPECT_EQ(devices_taking_part(std::vector<double>{1, 1, 1, 1}, 2),
            (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(devices_taking_part(std::vector<double>{2, 2}, 1), (std::vector<bool>{true, true}));
}

TEST(DevicesTakingPart, TheQuickestAlwaysAndAFailedDeviceNever) {
  // A failed device (0) takes no part; the quickest working one always does, whatever the rest.
  EXPECT_EQ(devices_taking_part(std::vector<double>{0, 1000, 3}, 1),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(devices_taking_part(std::vector<double>{5}, 100), (std::vector<bool>{true}));
  EXPECT_EQ(devices_taking_part(std::vector<double>{0, 0}, 4), (std::vector<bool>{false, false}));
  // No packages: nobody is left out for being slow.
  EXPECT_EQ(devices_taking_part(std::vector<double>{1, 1000}, 0), (std::vector<bool>{true, true}));
  EXPECT_TRUE(devices_taking_part(std::vector<double>{}, 3).empty());
}

TEST(PrefetchDepth, CoversTheTransferWithTheComputeAhead) {
  EXPECT_EQ(prefetch_depth(0.001, 0.01, 8), 1);  // rows arrive well within one package
  EXPECT_EQ(prefetch_depth(0.025, 0.01, 8), 3);  // 2.5 packages' time to arrive
  EXPECT_EQ(prefetch_depth(1.0, 0.01, 8), 8);    // never beyond what was asked
  EXPECT_EQ(prefetch_depth(0.1, 0, 4), 4);       // not measured yet: what was asked
  EXPECT_EQ(prefetch_depth(0.1, 0.01, 0), 1);
}

}  // namespace
}  // namespace hit::detail
