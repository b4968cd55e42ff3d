#include "sim_plots.hpp"

#include <algorithm>
#include <sstream>

#include "core/errors.hpp"
#include "core/gnuplot.hpp"
#include "core/log.hpp"
#include "core/output_file.hpp"

namespace meshslice::simapp {

namespace {

// The 2D GEMM algorithms, which the paper's per-GEMM comparison (Fig. 11) shows.
bool two_dimensional(Algorithm a) { return a != Algorithm::tp1d && a != Algorithm::fsdp; }

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(5);
  s << v;
  return s.str();
}

// A script drawing one panel per model, stacked, from data files named <stem>_<model>.dat.
// `panel` is the plot command for one model with DATA standing for its file. Values that do
// not exist (Cannon on a non-square mesh) are NaN, which gnuplot leaves out without drawing
// a line across them.
std::string script(const std::string& png, const std::string& title, int models,
                   const std::string& settings, const std::vector<std::string>& panel_titles,
                   const std::vector<std::string>& panels) {
  std::ostringstream gp;
  gp << "set terminal pngcairo noenhanced size 1000," << 420 * models << " font ',10'\n"
     << "set output '" << png << "'\n"
     << "set key autotitle columnhead outside right\n"
     << "set grid ytics\n"
     << settings << "set multiplot layout " << models << ",1 title '" << title << "'\n";
  for (std::size_t i = 0; i < panels.size(); ++i)
    gp << "set title '" << panel_titles[i] << "'\n" << panels[i] << "\n";
  gp << "unset multiplot\n";
  return gp.str();
}

std::string replace_data(std::string command, const std::string& file) {
  for (auto at = command.find("DATA"); at != std::string::npos; at = command.find("DATA"))
    command.replace(at, 4, "'" + file + "'");
  return command;
}

struct Figure {
  std::string stem;  // fig09_weak_scaling
  std::string title;
  std::string settings;
  std::string panel;              // plot command, DATA = the model's data file
  std::vector<std::string> data;  // per model
};

// Figs. 13 and 14 draw their studies alike: per model, the column the study varies (x) and
// beside it the emulated, cost-model and tuner FLOP utilizations, so one writer serves both.
template <class XColumn>
std::vector<std::string> study_data(const std::vector<StudyRow>& rows,
                                    const std::vector<const sim::LlmSpec*>& models,
                                    const std::string& x_header, XColumn x) {
  std::vector<std::string> data;
  for (const sim::LlmSpec* llm : models) {
    std::ostringstream d;
    d << x_header << " emulated cost_model tuner_per_shape\n";
    for (const StudyRow& r : rows)
      if (r.llm == llm)
        d << x(r) << " " << fmt(r.emulated) << " " << fmt(r.cost_model) << " " << fmt(r.tuner)
          << "\n";
    data.push_back(d.str());
  }
  return data;
}

}  // namespace

std::vector<std::string> write_plots(const SimResults& results, const SimSettings& s,
                                     const hw::Machine& machine, const std::string& out_dir) {
  std::vector<Figure> figures;
  const int largest = s.chips.empty() ? 0 : *std::max_element(s.chips.begin(), s.chips.end());
  // Figs. 9 and 12: utilization against chips, one line per algorithm.
  for (sim::Scaling scaling : s.scalings) {
    const bool weak = scaling == sim::Scaling::weak;
    Figure f{weak ? "fig09_weak_scaling" : "fig12_strong_scaling",
             concat("FC-layer FLOP utilization, ", sim::scaling_name(scaling), " scaling (",
                    machine.name, ", emulated)"),
             "set logscale x 2\nset xlabel 'chips'\nset ylabel 'FLOP utilization'\n"
             "set yrange [0:1]\n",
             "plot for [i=2:*] DATA using 1:i with linespoints lw 2",
             {}};
    for (const sim::LlmSpec* llm : s.models) {
      std::ostringstream d;
      d << "chips";
      for (Algorithm a : s.algorithms)
        if (sim::evaluated(a, scaling)) d << " " << algorithm_name(a);
      d << "\n";
      for (int chips : s.chips) {
        d << chips;
        for (Algorithm a : s.algorithms) {
          if (!sim::evaluated(a, scaling)) continue;
          const Point* p = find_point(results, llm, scaling, chips, a);
          const sim::Configuration* c = p ? p->best_config() : nullptr;
          d << " " << (c ? fmt(c->flop_utilization(machine)) : "NaN");
        }
        d << "\n";
      }
      f.data.push_back(d.str());
    }
    figures.push_back(f);
  }
  // Fig. 10 and 11: the largest weak-scaling cluster.
  const bool has_weak = std::count(s.scalings.begin(), s.scalings.end(), sim::Scaling::weak) > 0;
  if (has_weak && largest > 0) {
    Figure breakdown{"fig10_comm_breakdown",
                     concat("Communication time relative to computation, ", largest,
                            " chips, weak scaling"),
                     "set style data histograms\nset style histogram rowstacked\n"
                     "set style fill solid 0.8 border -1\nset boxwidth 0.7\n"
                     "set ylabel 'time / compute time'\nset xtics rotate by -30\n",
                     "plot DATA using 2:xtic(1), '' using 3, '' using 4",
                     {}};
    Figure per_gemm{"fig11_gemms",
                    concat("FLOP utilization of each FC GEMM, ", largest, " chips, weak scaling"),
                    "set style data histograms\nset style histogram clustered gap 1\n"
                    "set style fill solid 0.8 border -1\nset yrange [0:1]\n"
                    "set ylabel 'FLOP utilization'\nset xtics rotate by -40\n",
                    "plot for [i=2:*] DATA using i:xtic(1)",
                    {}};
    for (const sim::LlmSpec* llm : s.models) {
      std::ostringstream b, g;
      b << "algorithm launch transfer sync\n";
      std::vector<const sim::Configuration*> configs;
      g << "gemm";
      for (Algorithm a : s.algorithms) {
        const Point* p = find_point(results, llm, sim::Scaling::weak, largest, a);
        const sim::Configuration* c = p ? p->best_config() : nullptr;
        if (c) {
          const sim::SimTotals& t = c->totals;
          b << algorithm_name(a) << " " << fmt(t.launch / t.compute) << " "
            << fmt(t.transfer / t.compute) << " " << fmt(t.sync / t.compute) << "\n";
        }
        if (two_dimensional(a)) {
          g << " " << algorithm_name(a);
          configs.push_back(c);
        }
      }
      g << "\n";
      const Point* any =
          find_point(results, llm, sim::Scaling::weak, largest, Algorithm::meshslice);
      const sim::Configuration* reference = any ? any->best_config() : nullptr;
      for (const sim::Configuration* c : configs)
        if (!reference && c) reference = c;
      if (reference)
        for (std::size_t i = 0; i < reference->gemms.size(); ++i) {
          g << reference->gemms[i].gemm.label();
          for (const sim::Configuration* c : configs)
            g << " " << (c ? fmt(sim::flop_utilization(c->gemms[i], largest, machine)) : "NaN");
          g << "\n";
        }
      breakdown.data.push_back(b.str());
      per_gemm.data.push_back(g.str());
    }
    figures.push_back(breakdown);
    figures.push_back(per_gemm);
  }
  // Figs. 13 and 14: emulation against the analytical cost model.
  if (!results.shapes.empty()) {
    Figure f{"fig13_mesh_shapes",
             concat("MeshSlice on every mesh shape of ", s.shape_study_chips,
                    " chips: emulated vs cost model"),
             "set ylabel 'FLOP utilization'\nset yrange [0:1]\nset xlabel 'mesh (rows x cols)'\n",
             "plot DATA using 2:xtic(1) with linespoints lw 2, '' using 3 with linespoints lw 2, "
             "'' using 4 with linespoints lw 2",
             study_data(results.shapes, s.models, "mesh",
                        [](const StudyRow& r) { return concat(r.rows, "x", r.cols); })};
    figures.push_back(f);
  }
  if (!results.slices.empty()) {
    Figure f{"fig14_slices",
             concat("MeshSlice at every slice count S on a ", s.slice_study_rows, "x",
                    s.slice_study_cols, " mesh: emulated vs cost model"),
             "set ylabel 'FLOP utilization'\nset yrange [0:1]\nset xlabel 'slice count S'\n"
             "set logscale x 2\n",
             "plot DATA using 1:2 with linespoints lw 2, '' using 1:3 with linespoints lw 2, "
             "'' using 1:4 with linespoints lw 2",
             study_data(results.slices, s.models, "S", [](const StudyRow& r) { return r.slices; })};
    figures.push_back(f);
  }

  const bool gnuplot = gnuplot_installed();
  std::vector<std::string> pngs;
  for (const Figure& f : figures) {
    std::vector<std::string> titles, panels;
    for (std::size_t m = 0; m < s.models.size(); ++m) {
      const std::string file = f.stem + "_" + s.models[m]->name + ".dat";
      write_output_file(out_dir + "/" + file, f.data[m]);
      titles.push_back(s.models[m]->label);
      panels.push_back(replace_data(f.panel, file));
    }
    const std::string png = f.stem + ".png";
    write_output_file(out_dir + "/" + f.stem + ".gp",
                      script(png, f.title + " (" + machine.name + ")",
                             static_cast<int>(s.models.size()), f.settings, titles, panels));
    if (!gnuplot) continue;
    if (run_gnuplot(out_dir, f.stem + ".gp")) pngs.push_back(out_dir + "/" + png);
  }
  if (!gnuplot)
    log_info("gnuplot not found: wrote the plot scripts (", out_dir,
             "/fig*.gp) and data; install gnuplot (Debian: gnuplot-nox) to render them");
  return pngs;
}

}  // namespace meshslice::simapp
