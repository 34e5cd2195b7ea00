//===- OpenAiFields.cpp - Typed, range-checked JSON field readers ---------===//
#include "OpenAiFields.h"

#include <cmath>

namespace ingot::server::fields {

using json = nlohmann::json;

void refuse(const std::string &param, const std::string &message,
            const std::string &code) {
  ApiError e;
  e.param = param;
  e.message = message;
  e.code = code;
  throw RequestRefused{e};
}

const json *find(const json &body, const char *name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

static std::string quoted(const char *name) {
  return std::string("'") + name + "'";
}

static std::string show(double v) { return json(v).dump(); }

double number(const json &body, const char *name, double fallback, double lo,
              double hi, bool loOpen) {
  const json *f = find(body, name);
  if (!f)
    return fallback;
  if (!f->is_number())
    refuse(name, quoted(name) + " must be a number, not " + f->type_name());
  double v = f->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi || (loOpen && v == lo))
    refuse(name, quoted(name) + " is " + show(v) + "; it must be in " +
                     (loOpen ? "(" : "[") + show(lo) + ", " + show(hi) + "]");
  return v;
}

int64_t integer(const json &body, const char *name, int64_t fallback,
                int64_t lo, int64_t hi) {
  const json *f = find(body, name);
  if (!f)
    return fallback;
  const double d = f->is_number() ? f->get<double>() : 0.5;
  if (!f->is_number() || std::floor(d) != d)
    refuse(name, quoted(name) + " must be an integer, not " +
                     (f->is_number() ? f->dump() : f->type_name()));
  bool inRange = false;
  int64_t v = 0;
  if (f->is_number_unsigned()) {
    uint64_t u = f->get<uint64_t>();
    inRange = hi >= 0 && u <= uint64_t(hi) && int64_t(u) >= lo;
    v = int64_t(u);
  } else if (f->is_number_integer()) {
    v = f->get<int64_t>();
    inRange = v >= lo && v <= hi;
  } else if (std::fabs(d) < 9.0e18) { // a float that int64 holds exactly enough
    v = int64_t(d);
    inRange = v >= lo && v <= hi;
  }
  if (!inRange)
    refuse(name, quoted(name) + " is " + f->dump() + "; it must be in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

bool boolean(const json &body, const char *name, bool fallback) {
  const json *f = find(body, name);
  if (!f)
    return fallback;
  if (!f->is_boolean())
    refuse(name,
           quoted(name) + " must be true or false, not " + f->type_name());
  return f->get<bool>();
}

} // namespace ingot::server::fields
