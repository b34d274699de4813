#pragma once
// The checks of hit-layout --advise: what it is given (result files, the shape, the network
// model) and what it is about to do (the memory of its dry runs, an empty ranking), each failing
// with an Error that names the file, the field or the figure (docs/advisor.md, "When there is
// nothing to advise").

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

#include "hit/advisor/candidates.hpp"
#include "hit/fpm/network_model.hpp"
#include "hit/shape.hpp"

namespace hit::tools {

// Every field of a --calibrate result that the fit reads.
void validate_result(const nlohmann::ordered_json& r, const std::string& file);

// A shape the program of `app` runs: the advice's command gives it sizes, not a shape.
void require_runnable_shape(advisor::App app, const Shape& s, const std::string& text);

// Every candidate's dry run fits the host (`candidates` 0: a floor of one, before enumerating).
void require_room_for_dry_runs(advisor::App app, std::size_t candidates, int nprocs, MPI_Comm comm);

// The network model prices every link class of the planned processes.
void require_link_classes(const fpm::NetworkModel& network, const std::string& file,
                          const advisor::Machine& machine, int ranks_per_node);

// At least one candidate was priced.
void require_candidates(const advisor::Advice& advice, advisor::App app);

}  // namespace hit::tools
