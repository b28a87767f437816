#!/usr/bin/env python3
"""scripts/build_region_catalog.py - writes data/carbon/regions.csv from the CodeCarbon/ACT files in
../shared/reference (run from the repository root). The catalog is committed; this script says how every value
was derived. Cloud regions of AWS and Azure have no current public table: each is given the location-based grid
intensity Google publishes for its own region on the same grid, or else the country's OWID average (the
recommendation of ../shared/reference/carbon.md, section 2)."""
import csv
import io
import json
import pathlib
import sys

SHARED = pathlib.Path("../shared/reference")
CC = SHARED / "carbon-intensity/codecarbon"
OWID_SRC = ("OWID (Ember, Energy Institute) annual average via CodeCarbon private_infra/global_energy_mix.json "
            "@ b05965e4 (field carbon_intensity)")
GCP_SRC = ("Google Cloud region carbon data (cloud.google.com/sustainability/region-carbon) via CodeCarbon "
           "cloud/impact.csv @ b05965e4, updated there 2024-07-13; the file does not state the data year, "
           "most likely 2023")

# AWS and Azure regions: (provider, region, location, proxy) where proxy is "gcp:<region>" (Google's figure for a
# region on the same grid) or an ISO3 country code (the OWID country average).
PROXIES = [
    ("aws", "us-east-1", "N. Virginia (Ashburn), USA", "gcp:us-east4"),
    ("aws", "us-east-2", "Ohio (Columbus), USA", "gcp:us-east5"),
    ("aws", "us-west-1", "N. California, USA (CAISO grid)", "gcp:us-west2"),
    ("aws", "us-west-2", "Oregon, USA", "gcp:us-west1"),
    ("aws", "ca-central-1", "Montreal, Canada (Quebec grid)", "gcp:northamerica-northeast1"),
    ("aws", "sa-east-1", "Sao Paulo, Brazil", "gcp:southamerica-east1"),
    ("aws", "eu-central-1", "Frankfurt, Germany", "gcp:europe-west3"),
    ("aws", "eu-west-1", "Dublin, Ireland", "IRL"),
    ("aws", "eu-west-2", "London, UK", "gcp:europe-west2"),
    ("aws", "eu-west-3", "Paris, France", "gcp:europe-west9"),
    ("aws", "eu-north-1", "Stockholm, Sweden", "SWE"),
    ("aws", "ap-east-1", "Hong Kong", "gcp:asia-east2"),
    ("aws", "ap-south-1", "Mumbai, India", "gcp:asia-south1"),
    ("aws", "ap-northeast-1", "Tokyo, Japan", "gcp:asia-northeast1"),
    ("aws", "ap-northeast-2", "Seoul, South Korea", "gcp:asia-northeast3"),
    ("aws", "ap-northeast-3", "Osaka, Japan", "gcp:asia-northeast2"),
    ("aws", "ap-southeast-1", "Singapore", "gcp:asia-southeast1"),
    ("aws", "ap-southeast-2", "Sydney, Australia", "gcp:australia-southeast1"),
    ("aws", "cn-north-1", "Beijing, China", "CHN"),
    ("aws", "cn-northwest-1", "Ningxia, China", "CHN"),
    ("azure", "eastus", "Virginia, USA", "gcp:us-east4"),
    ("azure", "eastus2", "Virginia (Boydton), USA", "gcp:us-east4"),
    ("azure", "centralus", "Iowa, USA", "gcp:us-central1"),
    ("azure", "northcentralus", "Illinois (Chicago), USA", "USA"),
    ("azure", "southcentralus", "Texas (San Antonio), USA (ERCOT grid)", "gcp:us-south1"),
    ("azure", "westcentralus", "Wyoming, USA", "USA"),
    ("azure", "westus", "California, USA (CAISO grid)", "gcp:us-west2"),
    ("azure", "westus2", "Washington (Quincy), USA (Northwest grid)", "gcp:us-west1"),
    ("azure", "canadacentral", "Toronto, Canada", "gcp:northamerica-northeast2"),
    ("azure", "canadaeast", "Quebec City, Canada (Quebec grid)", "gcp:northamerica-northeast1"),
    ("azure", "brazilsouth", "Sao Paulo, Brazil", "gcp:southamerica-east1"),
    ("azure", "northeurope", "Dublin, Ireland", "IRL"),
    ("azure", "westeurope", "Amsterdam, Netherlands", "gcp:europe-west4"),
    ("azure", "uksouth", "London, UK", "gcp:europe-west2"),
    ("azure", "ukwest", "Cardiff, UK (GB grid)", "gcp:europe-west2"),
    ("azure", "francecentral", "Paris, France", "gcp:europe-west9"),
    ("azure", "francesouth", "Marseille, France (French grid)", "gcp:europe-west9"),
    ("azure", "eastasia", "Hong Kong", "gcp:asia-east2"),
    ("azure", "southeastasia", "Singapore", "gcp:asia-southeast1"),
    ("azure", "japaneast", "Tokyo, Japan", "gcp:asia-northeast1"),
    ("azure", "japanwest", "Osaka, Japan", "gcp:asia-northeast2"),
    ("azure", "koreacentral", "Seoul, South Korea", "gcp:asia-northeast3"),
    ("azure", "koreasouth", "Busan, South Korea (national grid)", "gcp:asia-northeast3"),
    ("azure", "centralindia", "Pune, India (Maharashtra)", "gcp:asia-south1"),
    ("azure", "westindia", "Mumbai, India", "gcp:asia-south1"),
    ("azure", "southindia", "Chennai, India", "IND"),
    ("azure", "australiaeast", "New South Wales, Australia", "gcp:australia-southeast1"),
    ("azure", "australiasoutheast", "Victoria, Australia", "gcp:australia-southeast2"),
    ("azure", "australiacentral", "Canberra, Australia (NSW grid)", "gcp:australia-southeast1"),
    ("azure", "southafricanorth", "Johannesburg, South Africa", "gcp:africa-south1"),
    ("azure", "southafricawest", "Cape Town, South Africa (national grid)", "gcp:africa-south1"),
]


def main() -> None:
    owid = json.loads((CC / "private_infra/global_energy_mix.json").read_text())
    rows = []
    location = json.loads((SHARED / "embodied-data/act-v1-json/location.json").read_text())
    rows.append(["WORLD", "world", "", "World average", "", location["world"], 2023,
                 "ACT carbon_intensity/location.json 'world' (../shared/reference/embodied-data/act-v1-json, "
                 "facebookresearch/ACT @ d819dba); ../shared/reference/carbon.md: the same numbers as OWID 2023"])
    for iso, c in sorted(owid.items()):
        rows.append([iso, "country", "", c["country_name"], iso, round(c["carbon_intensity"], 1), c["year"],
                     OWID_SRC])
    gcp = {}
    text = (CC / "cloud/impact.csv").read_text(encoding="utf-8-sig")
    for r in csv.DictReader(io.StringIO(text)):
        region = r["region"]
        note = ""
        if region == "me-cenrtal1":  # typo in the file
            region, note = "me-central1", "; the file spells the region 'me-cenrtal1'"
        gcp[region] = (float(r["impact"]), f"{r['city']}, {r['country_name']}")
        rows.append([f"gcp:{region}", "cloud", "gcp", f"Google Cloud {region} ({r['city']})",
                     "", float(r["impact"]), 2023, GCP_SRC + note])
    for provider, region, where, proxy in PROXIES:
        if proxy.startswith("gcp:"):
            value, gcp_where = gcp[proxy[4:]]
            source = (f"proxy: Google's figure for {proxy} ({gcp_where}), on the same grid as this region "
                      f"({where}); " + GCP_SRC)
            year = 2023
        else:
            value, year = round(owid[proxy]["carbon_intensity"], 1), owid[proxy]["year"]
            source = f"proxy: the {owid[proxy]['country_name']} country average for this region ({where}); " + OWID_SRC
        name = {"aws": "AWS", "azure": "Azure"}[provider]
        rows.append([f"{provider}:{region}", "cloud", provider, f"{name} {region} ({where})", "", value, year, source])
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["id", "kind", "provider", "name", "country", "ci_g_per_kwh", "year", "source"])
    w.writerows(rows)
    pathlib.Path("data/carbon/regions.csv").write_text(out.getvalue())
    print(f"wrote data/carbon/regions.csv: {len(rows)} regions", file=sys.stderr)


if __name__ == "__main__":
    main()
