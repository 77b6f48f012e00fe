"""Module-level default mutated in place: a no-argument __init__ aliases DEFAULT_DATA's objects,
and every tool returns a string (JSON text on success, "Error: ..." on refusal)."""

import json

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SLOTS = ("breakfast", "lunch", "dinner")

DEFAULT_DATA = {
    "recipes": [
        {"id": 1, "title": "Shakshuka", "serves": 2, "tags": ["vegetarian"], "allergens": ["egg"],
         "ingredients": {"egg": [4, "pcs"], "tomato": [400, "g"], "onion": [1, "pcs"]}},
        {"id": 2, "title": "Pesto pasta", "serves": 2, "tags": ["vegetarian"],
         "allergens": ["nuts", "gluten"],
         "ingredients": {"pasta": [200, "g"], "basil": [30, "g"], "pine nuts": [20, "g"]}},
        {"id": 3, "title": "Chicken tray bake", "serves": 4, "tags": [], "allergens": [],
         "ingredients": {"chicken thigh": [800, "g"], "potato": [600, "g"], "onion": [2, "pcs"]}},
        {"id": 4, "title": "Lentil dal", "serves": 4, "tags": ["vegan"], "allergens": [],
         "ingredients": {"red lentils": [250, "g"], "onion": [1, "pcs"], "tomato": [200, "g"]}},
        {"id": 5, "title": "Overnight oats", "serves": 1, "tags": ["vegetarian"],
         "allergens": ["milk"], "ingredients": {"oats": [60, "g"], "milk": [150, "ml"]}},
        {"id": 6, "title": "Salmon with greens", "serves": 2, "tags": ["pescatarian"],
         "allergens": ["fish"], "ingredients": {"salmon": [2, "pcs"], "spinach": [90, "g"]}},
        {"id": 7, "title": "Satay tofu bowl", "serves": 2, "tags": ["vegan"],
         "allergens": ["nuts", "soy"], "ingredients": {"tofu": [400, "g"], "rice": [150, "g"]}},
    ],
    "pantry": {"egg": [6, "pcs"], "tomato": [500, "g"], "onion": [3, "pcs"], "pasta": [500, "g"],
               "oats": [400, "g"], "milk": [1000, "ml"], "rice": [1000, "g"],
               "red lentils": [100, "g"]},
    "plan": {"Monday": {"dinner": 4}, "Wednesday": {"lunch": 1}},
    "household": {"avoid_allergens": ["nuts"]},
    "ratings": {"1": [5, 4], "4": [4]},
}


class MealPlanner:
    def __init__(self):
        self.recipes = DEFAULT_DATA["recipes"]
        self.pantry = DEFAULT_DATA["pantry"]
        self.plan = DEFAULT_DATA["plan"]
        self.household = DEFAULT_DATA["household"]
        self.ratings = DEFAULT_DATA["ratings"]

    def _recipe(self, recipe_id: int) -> dict | None:
        return next((r for r in self.recipes if r["id"] == recipe_id), None)

    def search_recipes(self, ingredient: str = "", tag: str = "") -> str:
        """Find recipes using an ingredient and/or carrying a tag.

        Args:
            ingredient (str): Ingredient name to look for, e.g. "onion"; empty for any.
            tag (str): Tag such as "vegan"; empty for any.
        """
        rows = [{"id": r["id"], "title": r["title"]} for r in self.recipes
                if (not ingredient or ingredient.lower() in r["ingredients"])
                and (not tag or tag.lower() in r["tags"])]
        return json.dumps(rows)

    def get_recipe(self, recipe_id: int) -> str:
        """Show a recipe with its ingredients and average rating.

        Args:
            recipe_id (int): Numeric recipe id.
        """
        recipe = self._recipe(recipe_id)
        if recipe is None:
            return f"Error: no recipe {recipe_id}"
        stars = self.ratings.get(str(recipe_id), [])
        average = round(sum(stars) / len(stars), 2) if stars else None
        return json.dumps({**recipe, "average_rating": average})

    def plan_meal(self, day: str, slot: str, recipe_id: int) -> str:
        """Put a recipe into an empty slot of the weekly plan.

        Args:
            day (str): Day of the week, e.g. "Tuesday".
            slot (str): breakfast, lunch or dinner.
            recipe_id (int): Numeric recipe id; must avoid the household's allergens.
        """
        recipe = self._recipe(recipe_id)
        if day not in DAYS or slot not in SLOTS or recipe is None:
            return "Error: unknown day, slot or recipe"
        if self.plan.get(day, {}).get(slot) is not None:
            return f"Error: {day} {slot} is already planned; clear it first"
        clash = set(recipe["allergens"]) & set(self.household["avoid_allergens"])
        if clash:
            return f"Error: {recipe['title']} contains {', '.join(sorted(clash))}"
        self.plan.setdefault(day, {})[slot] = recipe_id
        return f"Planned {recipe['title']} for {day} {slot}"

    def clear_meal(self, day: str, slot: str) -> str:
        """Remove whatever is planned in a slot.

        Args:
            day (str): Day of the week.
            slot (str): breakfast, lunch or dinner.
        """
        if self.plan.get(day, {}).get(slot) is None:
            return f"Error: nothing planned for {day} {slot}"
        del self.plan[day][slot]
        return f"Cleared {day} {slot}"

    def shopping_list(self) -> str:
        """List what must be bought for every planned meal, after what is in the pantry."""
        need: dict = {}
        for slots in self.plan.values():
            for recipe_id in slots.values():
                for name, (qty, unit) in self._recipe(recipe_id)["ingredients"].items():
                    need[name] = [need.get(name, [0, unit])[0] + qty, unit]
        missing = {name: [qty - self.pantry.get(name, [0])[0], unit]
                   for name, (qty, unit) in need.items() if qty > self.pantry.get(name, [0])[0]}
        return json.dumps(dict(sorted(missing.items())))

    def cook(self, recipe_id: int) -> str:
        """Cook a recipe once, using its ingredients from the pantry.

        Args:
            recipe_id (int): Numeric recipe id; every ingredient must be in stock.
        """
        recipe = self._recipe(recipe_id)
        if recipe is None:
            return f"Error: no recipe {recipe_id}"
        short = [name for name, (qty, unit) in recipe["ingredients"].items()
                 if self.pantry.get(name, [0, unit])[0] < qty]
        if short:
            return f"Error: not enough {', '.join(short)}"
        for name, (qty, _unit) in recipe["ingredients"].items():
            self.pantry[name][0] -= qty
            if self.pantry[name][0] == 0:
                del self.pantry[name]
        return f"Cooked {recipe['title']}"

    def add_to_pantry(self, item: str, quantity: float, unit: str) -> str:
        """Add groceries to the pantry; the unit must match what is already stored.

        Args:
            item (str): Ingredient name, e.g. "spinach".
            quantity (float): Amount bought, positive.
            unit (str): g, ml or pcs.
        """
        name = item.lower()
        if quantity <= 0 or unit not in ("g", "ml", "pcs"):
            return "Error: quantity must be positive and unit one of g, ml, pcs"
        if name in self.pantry and self.pantry[name][1] != unit:
            return f"Error: {name} is stored in {self.pantry[name][1]}"
        self.pantry.setdefault(name, [0, unit])[0] += quantity
        return f"Pantry now has {self.pantry[name][0]} {unit} of {name}"

    def rate_recipe(self, recipe_id: int, stars: int) -> str:
        """Rate a recipe from 1 to 5 stars.

        Args:
            recipe_id (int): Numeric recipe id.
            stars (int): Whole number of stars, 1 to 5.
        """
        if self._recipe(recipe_id) is None or stars not in range(1, 6):
            return "Error: unknown recipe or stars outside 1-5"
        self.ratings.setdefault(str(recipe_id), []).append(stars)
        return f"Rated {stars} stars"
