#pragma once
// The fill of a rank in the layout pictures (dense and sparse alike), so one rank has one colour
// in every picture of a run.

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace hit::detail {

// Distinguishable fills for the first ranks, then golden-angle hues.
inline std::string rank_colour(int rank) {
  static const char* palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
                                  "#1f77b4", "#aec7e8", "#98df8a", "#c5b0d5", "#ffbb78",
                                  "#8c564b", "#17becf", "#bcbd22", "#dbdb8d", "#9edae5"};
  constexpr int n = sizeof(palette) / sizeof(palette[0]);
  if (rank >= 0 && rank < n) return palette[rank];
  const double hue = std::fmod(rank * 137.508, 360.0);
  return fmt::format("hsl({:.0f},55%,62%)", hue);
}

}  // namespace hit::detail
