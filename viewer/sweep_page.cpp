// The page of a sweep's results (`pliant view` on a sweep folder): one chart per numeric metric,
// drawn as inline SVG, with the table below. SVG rather than the three.js page or a PNG: charts
// need axis labels and a legend (real text, which the renderer's digits-only font cannot give),
// the page needs no node_modules to build, and any browser opens it with nothing fetched.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/output.h"
#include "pliant/viewer/viewer.h"

namespace pliant::viewer {

namespace {

namespace fs = std::filesystem;

// RFC 4180 records (quoted fields may hold commas, quotes and line breaks).
std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    any = true;
    if (c == '"') quoted = true;
    else if (c == ',') {
      row.push_back(field);
      field.clear();
    } else if (c == '\n') {
      row.push_back(field);
      field.clear();
      rows.push_back(row);
      row.clear();
      any = false;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (any) {
    row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

bool number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(value);
}

std::string label(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", v);
  return buffer;
}

// Tick values at round numbers (1, 2 or 5 times a power of ten apart) within [lo, hi], about
// `count` of them, so that a reader can read values off the axis.
std::vector<double> roundTicks(double lo, double hi, int count) {
  std::vector<double> ticks;
  const double span = hi - lo;
  if (!(span > 0.0) || !std::isfinite(span)) return ticks;
  const double raw = span / count;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  double step = decade;
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (decade * factor >= raw) {
      step = decade * factor;
      break;
    }
  for (double k = std::ceil(lo / step); k * step <= hi + 1e-9 * step; k += 1.0)
    ticks.push_back(std::abs(k) < 0.5 ? 0.0 : k * step);  // 0, not -0 or round-off
  return ticks;
}

// Colours of the series (Okabe and Ito's palette, readable by colour-blind readers).
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

struct Point {
  double x, y;
};

// One chart: `metric` against the first parameter, one line per value of the other parameters.
// Series in the order their first case comes (for a grid: the other parameters' values in order).
using Series = std::vector<std::pair<std::string, std::vector<Point>>>;

std::string chart(const std::string& xName, const std::string& yName, const Series& series) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto& [name, points] : series)
    for (const Point& p : points) {
      x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
    }
  if (!(x0 <= x1)) return "";
  // A log axis for a positive parameter spanning two decades or more (a log range, typically).
  const bool logX = x0 > 0.0 && x1 / x0 >= 100.0;
  const auto fx = [&](double x) { return logX ? std::log10(x) : x; };
  double a = fx(x0), b = fx(x1);
  if (a == b) a -= 0.5, b += 0.5;
  if (y0 == y1) y0 -= 0.5 * std::max(1.0, std::abs(y0)), y1 += 0.5 * std::max(1.0, std::abs(y1));
  const double pad = 0.05 * (y1 - y0);
  y0 -= pad, y1 += pad;
  constexpr double W = 560, H = 320, L = 80, R = 170, T = 20, B = 50;
  const auto px = [&](double x) { return L + (fx(x) - a) / (b - a) * (W - L - R); };
  const auto py = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
      << ' ' << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << W - L - R << "\" height=\"" << H - T - B
      << "\" fill=\"none\" stroke=\"#888\"/>\n";
  // Round ticks with faint grid lines; a log axis is ticked at its powers of ten.
  for (double y : roundTicks(y0, y1, 5)) {
    svg << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << py(y) << "\" y2=\"" << py(y)
        << "\" stroke=\"#e4e4e4\"/>\n";
    svg << "<text x=\"" << L - 6 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">" << label(y) << "</text>\n";
  }
  std::vector<double> xTicks = roundTicks(a, b, 5);
  if (logX) {
    xTicks.clear();
    const double every = std::max(1.0, std::ceil((b - a) / 6.0));  // decades between labels
    for (double e = std::ceil(a - 1e-9); e <= b + 1e-9; e += every) xTicks.push_back(std::pow(10.0, e));
  }
  for (double x : xTicks)
    svg << "<text x=\"" << px(x) << "\" y=\"" << H - B + 16 << "\" text-anchor=\"middle\">" << label(x) << "</text>\n";
  svg << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 10 << "\" text-anchor=\"middle\">"
      << io::escapeMarkup(xName) << (logX ? " (log)" : "") << "</text>\n";
  svg << "<text x=\"14\" y=\"" << (T + H - B) / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
      << (T + H - B) / 2 << ")\">" << io::escapeMarkup(yName) << "</text>\n";
  std::size_t s = 0;
  for (const auto& [name, points] : series) {
    const char* colour = kColours[s % std::size(kColours)];
    std::vector<Point> sorted = points;
    std::sort(sorted.begin(), sorted.end(), [](const Point& p, const Point& q) { return p.x < q.x; });
    svg << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\"";
    for (const Point& p : sorted) svg << px(p.x) << ',' << py(p.y) << ' ';
    svg << "\"/>\n";
    for (const Point& p : sorted)
      svg << "<circle cx=\"" << px(p.x) << "\" cy=\"" << py(p.y) << "\" r=\"3\" fill=\"" << colour << "\"/>\n";
    if (!name.empty())
      svg << "<text x=\"" << W - R + 10 << "\" y=\"" << T + 14 + 16 * static_cast<double>(s) << "\" fill=\"" << colour
          << "\">" << io::escapeMarkup(name) << "</text>\n";
    ++s;
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace

std::string buildSweepPage(const std::string& resultsCsv, const std::string& sweepJson) {
  const auto rows = parseCsv(resultsCsv);
  nlohmann::json sweep;
  try {
    sweep = nlohmann::json::parse(sweepJson);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("sweep.json: not JSON: ") + e.what());
  }
  if (rows.empty() || rows[0].size() < 3 || rows[0][0] != "case" || !sweep.contains("parameters") ||
      !sweep["parameters"].is_array())
    throw Error("results.csv: expected a sweep's table (a header starting with \"case\") and its sweep.json");
  const std::vector<std::string>& header = rows[0];
  const std::size_t parameters = sweep["parameters"].size();
  if (header.size() < parameters + 3) throw Error("results.csv: fewer columns than the sweep's parameters");
  const std::size_t status = header.size() - 2;
  std::ostringstream page;
  const std::string name = sweep.value("name", std::string("sweep"));
  page << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << io::escapeMarkup(name)
       << " (pliant sweep)</title>\n<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;"
          "font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}.failed{color:#b00}figure{display:inline-block;"
          "margin:0 1em 1em 0}</style></head><body>\n<h1>"
       << io::escapeMarkup(name) << "</h1>\n";
  if (sweep.contains("description") && sweep["description"].is_string())
    page << "<p>" << io::escapeMarkup(sweep["description"].get<std::string>()) << "</p>\n";
  std::size_t completed = 0;
  for (std::size_t r = 1; r < rows.size(); ++r)
    completed += rows[r].size() == header.size() && rows[r][status] == "completed";
  page << "<p>" << rows.size() - 1 << " cases, " << completed << " completed. Charts: each metric against "
       << io::escapeMarkup(header[1]) << (parameters > 1 ? ", one line per value of the other parameters" : "")
       << "; completed cases only.</p>\n";
  for (std::size_t m = parameters + 1; m < status; ++m) {
    Series series;
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const auto& row = rows[r];
      Point p{};
      if (row.size() != header.size() || row[status] != "completed" || !number(row[1], p.x) || !number(row[m], p.y))
        continue;
      std::string key;
      for (std::size_t k = 2; k <= parameters; ++k) key += (key.empty() ? "" : ", ") + header[k] + " = " + row[k];
      const auto found = std::find_if(series.begin(), series.end(), [&](const auto& s) { return s.first == key; });
      if (found == series.end()) series.push_back({key, {p}});
      else found->second.push_back(p);
    }
    if (series.empty()) continue;
    page << "<figure>" << chart(header[1], header[m], series) << "</figure>\n";
  }
  page << "<h2>Results</h2>\n<table><tr>";
  for (const std::string& h : header) page << "<th>" << io::escapeMarkup(h) << "</th>";
  page << "</tr>\n";
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const bool bad = rows[r].size() == header.size() && rows[r][status] != "completed";
    page << "<tr" << (bad ? " class=\"failed\"" : "") << ">";
    for (const std::string& cell : rows[r]) page << "<td>" << io::escapeMarkup(cell) << "</td>";
    page << "</tr>\n";
  }
  page << "</table>\n</body></html>\n";
  return page.str();
}

bool isSweepFolder(const std::string& folder) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(folder) / "sweep.json", ec) &&
         fs::is_regular_file(fs::path(folder) / "results.csv", ec);
}

void writeSweepPage(const std::string& folder, const std::string& htmlFile) {
  const fs::path dir(folder);
  const std::string csv =
      io::readInputFile((dir / "results.csv").string(), "a sweep's results.csv", io::kMaxRunOutputFileBytes);
  const std::string sweep =
      io::readInputFile((dir / "sweep.json").string(), "a sweep's sweep.json", io::kMaxRunOutputFileBytes);
  io::writeFileAtomically(htmlFile, buildSweepPage(csv, sweep));
}

}  // namespace pliant::viewer
