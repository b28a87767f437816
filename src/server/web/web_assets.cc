// server/web/web_assets.cc - the URL path and content type of each embedded file.
#include <map>

#include "server/web/embedded_files.h"

namespace llmco2::server {
namespace {

std::string content_type_of(const std::string& name) {
  static const std::map<std::string, std::string> types = {{".html", "text/html; charset=utf-8"},
                                                           {".js", "text/javascript; charset=utf-8"},
                                                           {".css", "text/css; charset=utf-8"},
                                                           {".json", "application/json"},
                                                           {".svg", "image/svg+xml"}};
  const auto dot = name.rfind('.');
  const auto it = dot == std::string::npos ? types.end() : types.find(name.substr(dot));
  return it == types.end() ? "application/octet-stream" : it->second;
}

std::string url_path_of(const std::string& name) {
  if (name == "index.html") return "/";
  if (name == "openapi.json") return "/openapi.json";
  return "/static/" + name;
}

}  // namespace

std::vector<WebAsset> web_assets() {
  std::vector<WebAsset> out;
  for (const EmbeddedFile& f : embedded_files()) out.push_back({url_path_of(f.name), content_type_of(f.name), f.bytes});
  return out;
}

}  // namespace llmco2::server
