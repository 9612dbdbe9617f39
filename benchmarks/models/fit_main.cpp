// collbench-fit: fits cost models to collbench CSVs and reports how well each
// algorithm's own cost formula predicts it (see include/collbench/models/fit.h).
//
// Exit status: 0 on success, 2 on any error (bad input, too few points,
// unwritable output), with one line on stderr and no partial output file.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "cli_checks.h"
#include "collbench/catalog/catalog.h"
#include "collbench/models/compute.h"
#include "collbench/models/fit.h"
#include "collbench/models/tuning.h"
#include "plot_runner.h"
#include "replace_on_commit.h"
#include "standard_output.h"

namespace {

// The measured compute of every model with gemm rows in `tables`, by name.
std::vector<collbench::MeasuredCompute> measured_models(
    const std::vector<collbench::NamedTable>& tables) {
  const collbench::GemmMeasurements gemm = collbench::read_gemm_measurements(tables);
  std::vector<collbench::MeasuredCompute> models;
  for (const std::string& name : gemm.models()) {
    const collbench::Model* model = nullptr;
    try {
      model = &collbench::find_model(name);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(fmt::format("{}: gemm rows of {}", gemm.source, e.what()));
    }
    models.push_back(collbench::measured_compute(gemm, *model));
  }
  return models;
}

// A compute.csv of an earlier run, when this run has no gemm rows: left
// beside this run's models.csv it would read as this run's.
void remove_earlier_compute(const std::string& path) {
  std::error_code error;
  std::filesystem::remove(path, error);
  if (error) {
    throw std::runtime_error(
        fmt::format("cannot remove {}, an earlier run's (this input has no gemm rows): {}", path,
                    error.message()));
  }
}

// The formats of --export.
constexpr std::string_view kOmpiRules = "ompi-rules";
constexpr std::string_view kMpichJson = "mpich-json";

// Writes `text` to `path` whole, or throws std::runtime_error.
void write_text(const std::string& path, const std::string& text) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int error = errno;
  if (std::fclose(file) != 0 || !written) {
    throw std::runtime_error(
        fmt::format("cannot write {}: {}", path, std::strerror(written ? errno : error)));
  }
}

// --export ompi-rules|mpich-json FILE: the file alone, replaced whole or not
// at all.
void export_rules(const std::vector<collbench::NamedTable>& tables,
                  const std::vector<collbench::Measurement>& measurements, std::string_view format,
                  const std::string& destination, const std::string& load_note) {
  collbench::OmpiRulesExport result;
  if (format == kMpichJson) {
    collbench::MpichJsonExport mpich =
        collbench::export_mpich_json(measurements, tables, load_note);
    // What the test holds every export to: a file MPICH's reader takes.
    collbench::parse_mpich_selection(mpich.text, destination);
    result.choices = std::move(mpich.choices);
    result.text = std::move(mpich.text);
  } else {
    result = collbench::export_ompi_rules(measurements, tables, load_note);
    // What the test holds every export to: a file Open MPI would read.
    collbench::parse_ompi_rules(result.text, destination);
  }
  const std::filesystem::path path(destination);
  const std::string folder =
      path.has_parent_path() ? path.parent_path().string() : std::string(".");
  collbench::ReplaceTogether output(folder);
  write_text(output.add(path.filename().string()), result.text);
  output.commit();
  for (const collbench::LibraryChoice& choice : result.choices) {
    std::printf("%s p=%d %.0f B: %s (fastest %s %.4g us, default %s)\n", choice.collective.c_str(),
                choice.ranks, choice.bytes, choice.chosen.c_str(), choice.fastest.c_str(),
                choice.fastest_seconds * 1e6,
                std::isnan(choice.default_seconds)
                    ? "not measured"
                    : fmt::format("{:.4g} us", choice.default_seconds * 1e6).c_str());
  }
  if (!load_note.empty()) std::printf("%s\n", load_note.c_str());
  std::printf("wrote %s\n", destination.c_str());
}

// Refuses one file named twice among the inputs: its rows would count
// twice (each row without a launch is a sample of its own).
void require_distinct_inputs(const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code error;
      if (std::filesystem::equivalent(inputs[j], inputs[i], error)) {
        throw std::invalid_argument(
            fmt::format("{} and {} name one file; give each input once (its rows would count "
                        "twice)",
                        inputs[j], inputs[i]));
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  collbench::cli::fail_on_unwritten_standard_output("collbench-fit");
  CLI::App app{
      "Fits α-β-γ cost models to collbench CSVs (any number, any mix of runs).\n"
      "Rows of one configuration are combined by the median of their samples: each launch's "
      "median (of median_us) where two or more launches measured it (the launch column: "
      "scripts/run.sh --launches), else every row (repetitions, and rows without a launch).\n"
      "Units: α in µs per message, β in ns per byte (and as GB/s = 1/β), γ in ns per byte of "
      "one operand vector reduced; times are ping-pong half round trips and sendrecv exchanges.\n"
      "Bottom-up predictions use α, β of the p2p ping-pong; where the input has p2p sendrecv "
      "rows (collbench --families sendrecv: every rank sends and receives at once, as in an "
      "allreduce), a point at p ranks uses the sendrecv fit at p ranks instead (models.csv: "
      "hockney_sendrecv rows, and then one bottom_up row per algorithm and rank count whose "
      "note names the fit used), and bottom_up_by_size rows: each exchange priced at the "
      "measured sendrecv time and each byte reduced at the measured reduce rate, both "
      "interpolated at the algorithm's mean message size (bytes/messages of its cost terms), "
      "each byte at the rate measured at the vector size where that is slower (the call's "
      "working set is in and out, 2n per rank; the benchmarks' is 2m); algorithms whose "
      "ranks all reduce at once (reduces_on_every_rank in collbench --list-algorithms --csv, "
      "e.g. every ring) take the "
      "local reduce_all rate at p ranks where the input has it (collbench --families "
      "reduce_all), the others rank 0's local reduce.\n"
      "On several nodes of several ranks each (rows with nodes, ranks_per_node and map_by) "
      "the prediction is bottom_up_two_level: each step inside a node at α, β of the intra "
      "ping-pong, each network step at those of a link matrix in the input (a links CSV of "
      "collbench-linkmatrix: hockney_link_matrix, the line through its median link's latency "
      "and bandwidth transfer), else of the inter ping-pong.\n"
      "The ping-pong's α comes from the sizes below its protocol switch (eager to rendezvous), "
      "β from those above by absolute error (models.csv: switch_bytes; the switch is the break "
      "where two lines fitted by relative error err least; one line where there are fewer than "
      "6 sizes).\n"
      "The measured selection chooses among collbench's own algorithms (the MPI library's mpi "
      "is the baseline each choice is compared with: selections.csv's vs_mpi and mpi_verdict) "
      "and is statistical: the samples of one configuration give a median and an "
      "interquartile range (over launches, or over repetitions, e.g. collbench "
      "--benchmark_repetitions=3 --interleave); algorithms with the same cost terms at the rank "
      "count are one choice; "
      "an algorithm is within noise unless another's q3, raised by --tie-tolerance, is below "
      "its q1; each size chooses, independently of the size before, the first algorithm in "
      "table order within noise whose median is within that tolerance of the lowest, the "
      "others within noise being its ties, and each boundary's margin is reported.\n"
      "Writes OUT_DIR/models.csv (one row per fit: parameters with units, R² on log time, "
      "median and max relative error), OUT_DIR/predictions.csv (measured vs predicted per "
      "point) and OUT_DIR/selections.csv (per selection and size: the choice with its median "
      "and quartiles, the exchange it makes (named by that exchange's first algorithm), the "
      "lowest median, the boundary margin, its equivalents and ties with the ties' exchanges, "
      "the MPI library's time and how it compares with the choice), all "
      "replaced together or none, prints a report, and with --plot-dir draws PNGs through "
      "scripts/plot.py.\n"
      "Where the input has gemm rows (family local, algorithm gemm: each GEMM layer of a "
      "catalog model timed at batches per rank, and a peak GEMM), also OUT_DIR/compute.csv: "
      "per model and batch the forward, backward and iteration seconds of its GEMMs, their "
      "GFLOP/s and efficiency against the peak (and with --plot-dir compute_gflops.png), "
      "replaced with the others; a compute.csv of an earlier run is removed when the input "
      "has none, so that the folder never mixes runs. An input of gemm rows only writes the "
      "other three files with their headers alone.",
      "collbench-fit"};
  std::vector<std::string> inputs;
  std::string out_dir = ".";
  std::string plot_dir;
  std::string plot_script = collbench::default_plot_script();
  std::string python = collbench::default_python();
  bool residuals = false;
  bool brief = false;
  collbench::FitOptions options;
  app.add_option("csv", inputs,
                 "collbench CSV files (results/README.md), and links CSVs of "
                 "collbench-linkmatrix")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--out-dir", out_dir,
                 "folder for models.csv, predictions.csv and selections.csv (created if missing)")
      ->capture_default_str()
      ->check(collbench::cli::path());
  app.add_option("--plot-dir", plot_dir,
                 "also draw the fit plots (PNG) into this folder; default: no plots")
      ->check(collbench::cli::path());
  app.add_option("--plot-script", plot_script, "scripts/plot.py to run")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  app.add_option("--python", python,
                 "Python with matplotlib (a name without '/' is looked up in PATH)")
      ->capture_default_str()
      ->check(collbench::cli::path());
  std::vector<std::string> export_args;
  CLI::Option* export_option =
      app.add_option(
             "--export", export_args,
             "FORMAT FILE: instead of the fits, write a tuning file the MPI library reads, "
             "from the rows of its algorithms forced one by one (collbench "
             "--library-algorithms). ompi-rules: an Open MPI 4.1 coll_tuned dynamic rules "
             "file (per collective and measured rank count, at each measured size the "
             "fastest forced algorithm where it beat the default mpi beyond both "
             "interquartile ranges, the fixed decision elsewhere; a header says where it "
             "was measured). mpich-json: an MPICH MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "
             "from the mpich_* rows, the same choices, MPICH 4.0.2's own selection for "
             "every collective and size not measured. "
             "The input must hold one dtype, op and placement of those rows, "
             "and every collective with library rows some forced ones. FILE is replaced "
             "whole or not at all")
          ->expected(2)
          ->type_name("FORMAT FILE");
  bool allow_loaded = false;
  app.add_flag("--allow-loaded", allow_loaded,
               "--export from rows measured under load too (the CSV's loaded column yes: other "
               "work kept the machine busy). Without it those rows are left out, and where a "
               "size's choice would rest on them alone the export refuses (exit 2); with it "
               "they are kept and the file's header says how many")
      ->needs(export_option);
  app.add_flag("--residuals", residuals, "print every top-down residual in the report");
  app.add_flag("--brief", brief,
               "print only the p2p α and β, each algorithm's median relative error and the "
               "selection strings (what scripts/run.sh shows)");
  app.add_option("--gamma-max-stderr", options.gamma_max_rel_stderr,
                 "largest relative standard error at which a top-down fit keeps its own γ; "
                 "above it γ comes from the local reduce fit (fraction)")
      ->capture_default_str()
      ->check(collbench::cli::number_at_least(0, false, "", 10));
  app.add_option("--tie-tolerance", options.tie_tolerance,
                 "the measured selection's tolerance (fraction): an algorithm beats another at "
                 "a size only where its q3 raised by this lies below the other's q1; those no "
                 "one beats are within noise of the fastest (selections.csv's ties)")
      ->capture_default_str()
      ->check(collbench::cli::number_at_least(0, false, "", 1));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "collbench-fit: %s (see --help)\n", e.what());
    return 2;
  }

  if (!export_args.empty() && export_args[0] != kOmpiRules && export_args[0] != kMpichJson) {
    std::fprintf(stderr, "collbench-fit: --export %s: unknown format; accepted: %s, %s\n",
                 export_args[0].c_str(), std::string(kOmpiRules).c_str(),
                 std::string(kMpichJson).c_str());
    return 2;
  }

  try {
    require_distinct_inputs(inputs);
    if (!export_args.empty()) {
      const std::string& destination = export_args[1];
      for (const std::string& input : inputs) {
        std::error_code error;
        if (std::filesystem::equivalent(input, destination, error)) {
          throw std::invalid_argument(fmt::format("--export names the input file {}", destination));
        }
      }
      std::vector<collbench::NamedTable> tables;
      for (const std::string& path : inputs) {
        tables.push_back({path, collbench::read_csv_file(path)});
      }
      // Every row validated first, so that an error's row numbers are the file's.
      collbench::aggregate_measurements(tables);
      const collbench::LoadedRows kept = collbench::leave_out_loaded(tables, allow_loaded);
      export_rules(kept.tables, collbench::aggregate_measurements(kept.tables), export_args[0],
                   destination, kept.header);
      return 0;
    }
    collbench::require_writable_folder(out_dir, "--out-dir");
    if (!plot_dir.empty()) collbench::require_writable_folder(plot_dir, "--plot-dir");
    collbench::require_outputs_not_inputs(
        out_dir, {"models.csv", "predictions.csv", "selections.csv", "compute.csv"}, inputs,
        "--out-dir");
    if (!plot_dir.empty()) collbench::require_plotting(python, plot_script);
    std::vector<collbench::NamedTable> tables;
    for (const std::string& path : inputs) tables.push_back({path, collbench::read_csv_file(path)});
    collbench::LoadSummary summary;
    const std::vector<collbench::Measurement> measurements =
        collbench::aggregate_measurements(tables, &summary);
    const std::vector<collbench::MeasuredCompute> compute = measured_models(tables);
    // gemm rows alone: nothing for the network fits, which then write no row.
    const collbench::FitResults results = measurements.empty() && !compute.empty()
                                              ? collbench::FitResults{}
                                              : collbench::fit_measurements(measurements, options);
    // Both files (and the plots) of this run or all of the one before, never a mix.
    std::optional<collbench::ReplaceTogether> plot_folder;  // creates it, removes it on failure
    if (!plot_dir.empty()) plot_folder.emplace(plot_dir);
    collbench::ReplaceTogether outputs(out_dir);
    const std::string models_temp = outputs.add("models.csv");
    const std::string predictions_temp = outputs.add("predictions.csv");
    const std::string selections_temp = outputs.add("selections.csv");
    const std::string models_path = outputs.path("models.csv");
    const std::string predictions_path = outputs.path("predictions.csv");
    const std::string selections_path = outputs.path("selections.csv");
    const std::string compute_path = outputs.path("compute.csv");
    std::vector<std::string> plots;
    try {
      collbench::write_models_csv(models_temp, results);
      collbench::write_predictions_csv(predictions_temp, results);
      collbench::write_selections_csv(selections_temp, results);
      std::string compute_temp;
      if (!compute.empty()) {
        compute_temp = outputs.add("compute.csv");
        collbench::write_compute_csv(compute_temp, compute);
      }
      if (!plot_dir.empty() && !results.fits.empty()) {
        plots = collbench::plot_together(outputs, plot_dir, python, plot_script,
                                         {"fit", "--predictions", predictions_temp});
      }
      if (!plot_dir.empty() && !compute.empty()) {
        for (std::string& plot : collbench::plot_together(outputs, plot_dir, python, plot_script,
                                                          {"compute", compute_temp})) {
          plots.push_back(std::move(plot));
        }
      }
      outputs.commit();
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format(
          "{}; {} keeps the models.csv, predictions.csv, selections.csv and compute.csv it had "
          "(none replaced, no plot)",
          e.what(), out_dir));
    }
    if (compute.empty()) remove_earlier_compute(compute_path);
    std::fputs(brief ? collbench::format_brief(results).c_str()
                     : collbench::format_report(results, summary, residuals).c_str(),
               stdout);
    std::fputs(collbench::format_compute_report(compute).c_str(), stdout);
    std::printf("\nwrote %s\nwrote %s\nwrote %s\n", models_path.c_str(), predictions_path.c_str(),
                selections_path.c_str());
    if (!compute.empty()) std::printf("wrote %s\n", compute_path.c_str());
    for (const std::string& plot : plots) std::printf("wrote %s\n", plot.c_str());
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "collbench-fit: %s\n", e.what());
    return 2;
  }
  return 0;
}
