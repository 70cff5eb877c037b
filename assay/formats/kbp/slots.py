"""The TAC KBP slot inventory of Cold Start 2015: which ``domain:name`` slots exist and which are
single-valued (one right answer; an asterisk in the task description's table).

The table is the slot list of the 2015 Cold Start task description (each slot with its domain,
range and inverse); a slot is known for a domain when the slot or an inverse names it there.

>>> slot_quantity("per:age"), slot_quantity("org:top_members_employees")
('single', 'list')
>>> slot_quantity("gpe:title") is None
True
"""
from __future__ import annotations

# domain(s)  name  range(s)  inverse ('*' = single-valued, '-' = none)
_TABLE = """
per age* string -
per,org alternate_names string -
gpe births_in_city per city_of_birth*
gpe births_in_country per country_of_birth*
gpe births_in_stateorprovince per stateorprovince_of_birth*
per cause_of_death* string -
per charges string -
per children per parents
per cities_of_residence gpe residents_of_city
per city_of_birth* gpe births_in_city
per city_of_death* gpe deaths_in_city
org city_of_headquarters* gpe headquarters_in_city
per countries_of_residence gpe residents_of_country
per country_of_birth* gpe births_in_country
per country_of_death* gpe deaths_in_country
org country_of_headquarters* gpe headquarters_in_country
org date_dissolved* string -
org date_founded* string -
per date_of_birth* string -
per date_of_death* string -
gpe deaths_in_city per city_of_death*
gpe deaths_in_country per country_of_death*
gpe deaths_in_stateorprovince per stateorprovince_of_death*
per employee_or_member_of org,gpe employees_or_members
org,gpe employees_or_members per employee_or_member_of
org founded_by per,org,gpe organizations_founded
gpe headquarters_in_city org city_of_headquarters*
gpe headquarters_in_country org country_of_headquarters*
gpe headquarters_in_stateorprovince org stateorprovince_of_headquarters*
per,org,gpe holds_shares_in org shareholders
org,gpe member_of org members
org members org,gpe member_of
org number_of_employees_members* string -
per,org,gpe organizations_founded org founded_by
per origin string -
per other_family per other_family
per parents per children
org parents org,gpe subsidiaries
org political_religious_affiliation string -
per religion* string -
gpe residents_of_city per cities_of_residence
gpe residents_of_country per countries_of_residence
gpe residents_of_stateorprovince per statesorprovinces_of_residence
per schools_attended org students
org shareholders per,org,gpe holds_shares_in
per siblings per siblings
per spouse per spouse
per stateorprovince_of_birth* gpe births_in_stateorprovince
per stateorprovince_of_death* gpe deaths_in_stateorprovince
org stateorprovince_of_headquarters* gpe headquarters_in_stateorprovince
per statesorprovinces_of_residence gpe residents_of_stateorprovince
org students per schools_attended
org,gpe subsidiaries org parents
per title string -
per top_member_employee_of org top_members_employees
org top_members_employees per top_member_employee_of
org website* string -
"""


def _build() -> dict[tuple[str, str], str]:
    table: dict[tuple[str, str], str] = {}
    for row in _TABLE.strip().splitlines():
        domains, name, ranges, inverse = row.split()
        quantity = "single" if name.endswith("*") else "list"
        for domain in domains.split(","):
            table.setdefault((domain, name.rstrip("*")), quantity)
        if inverse != "-":
            inv_quantity = "single" if inverse.endswith("*") else "list"
            for domain in ranges.split(","):
                if domain != "string":
                    table.setdefault((domain, inverse.rstrip("*")), inv_quantity)
    return table


SLOTS: dict[tuple[str, str], str] = _build()


def slot_quantity(slot: str) -> str | None:
    """``'single'`` or ``'list'`` for a known ``domain:name`` slot, else ``None``."""
    domain, sep, name = slot.partition(":")
    if not sep:
        return None
    return SLOTS.get((domain, name))


__all__ = ["SLOTS", "slot_quantity"]
